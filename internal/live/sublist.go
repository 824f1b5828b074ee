package live

import "slices"

// subList is a connection's subscriptions, in the order they were made:
// a slice searched by id rather than a map, because a connection holds few
// (most hold one; wire.MaxSubscriptions bounds them at 100) and an empty or
// one-entry map costs ten times the slice's memory per connection (a
// map's first group holds eight slots). The connection's mu guards it.
type subList []liveSub

// find returns the index of the subscription id, or -1.
func (l subList) find(id string) int {
	for i := range l {
		if l[i].id == id {
			return i
		}
	}
	return -1
}

// remove takes the subscription id out, keeping the others' order, and
// returns it, if it was held.
func (l *subList) remove(id string) (liveSub, bool) {
	i := l.find(id)
	if i < 0 {
		return liveSub{}, false
	}
	s := (*l)[i]
	*l = slices.Delete(*l, i, i+1) // zeroes the freed slot: no reference kept
	return s, true
}
