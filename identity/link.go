package identity

import "strings"

// Merge reports that handle From collapsed into handle Into: every
// identifier that resolved to From now resolves to Into, and From is
// retired. The caller folds From's board entries into Into's.
type Merge struct {
	From, Into uint32
}

// LinkResult is what Link did.
type LinkResult struct {
	// Handle is the live handle of member after the link.
	Handle uint32
	// Merges lists the handles that collapsed into Handle, in the order
	// their aliases were given; nil when none did.
	Merges []Merge
}

// Link makes every alias resolve to member, as POST /v1/identities does.
//
// Member gets a handle if it resolves to none. If member is itself an alias
// (or a retired handle's former id), it stands for the member it resolves
// to, and the aliases are linked to that member. Each alias then:
//   - resolving to nothing, becomes an alias of member's handle;
//   - resolving to member's handle already (member itself, a repeat), is a no-op;
//   - resolving to another live handle, merges that handle into member's:
//     the other handle's id and all its aliases now resolve to member's
//     handle, the other handle is retired, and the merge is reported.
//
// Everything is validated first: on error (wrapping ErrEmpty, ErrTooLong or
// ErrInvalid and naming the field, or ErrFull) nothing changes. Cost: one
// lookup per alias, plus for each merge the size of the smaller alias set
// (see aliases.go).
// Deterministic: the result depends only on the sequence of calls. Not safe
// for concurrent use.
func (ix *Index) Link(member string, aliases []string) (LinkResult, error) {
	if err := validateLink(member, aliases); err != nil {
		return LinkResult{}, err
	}
	// At most one new handle, and per alias one new alias or one merge
	// (which turns the retired id into an alias).
	if err := ix.reserve(1 + len(aliases)); err != nil {
		return LinkResult{}, err
	}
	h, ok := ix.Resolve(member)
	if !ok {
		h = ix.newHandle(member)
	}
	res := LinkResult{Handle: h}
	for _, a := range aliases {
		res.Merges = ix.linkOne(h, a, res.Merges)
	}
	return res, nil
}

// linkOne links one valid alias to live handle h, appending any merge.
func (ix *Index) linkOne(h uint32, name string, merges []Merge) []Merge {
	other, ok := ix.Resolve(name)
	switch {
	case !ok:
		ix.addAlias(name, h)
	case other != h:
		ix.collapse(other, h)
		merges = append(merges, Merge{From: other, Into: h})
	}
	return merges
}

// addAlias stores a copy of the new, valid name as an alias of live owner.
func (ix *Index) addAlias(name string, owner uint32) {
	n := uint32(len(ix.aliases))
	ix.aliases = append(ix.aliases, alias{name: strings.Clone(name)})
	ix.insert(ix.aliases[n].name, aliasBit|n)
	ix.own(owner, n)
}

// collapse merges live handle from into live handle into: from's aliases
// resolve to into, and from's id becomes an alias of into.
func (ix *Index) collapse(from, into uint32) {
	ix.moveSet(from, into)
	ix.retire(from, into)
}

// retire turns live handle from's id into an alias of into (sharing the
// string) and marks from retired.
func (ix *Index) retire(from, into uint32) {
	n := uint32(len(ix.aliases))
	ix.aliases = append(ix.aliases, alias{name: ix.names[from]})
	ix.repoint(ix.names[from], aliasBit|n)
	ix.own(into, n)
	ix.retired[from>>6] |= 1 << (from & 63)
	ix.live--
}
