package subscriptions

// DefaultRingSize is how many recent changes a board-window's ring keeps for
// `since` resume when Config.RingSize is zero: 24 bytes each, 96 KiB at most
// per watched board-window.
const DefaultRingSize = 4096

// step is one change as the ring keeps it.
type step struct {
	seq      uint64
	member   uint32
	old, new int32
	total    int32
}

func stepOf(c Change) step {
	return step{seq: c.Seq, member: c.Member, old: int32(c.OldRank), new: int32(c.NewRank), total: int32(c.Total)}
}

// ring keeps the most recent changes of one board-window: it knows every
// change with from < seq ≤ last. Not safe for concurrent use: its board-window's lock
// guards it.
type ring struct {
	buf        []step
	head, n    int // oldest at buf[head]
	from, last uint64
	size       int
}

func newRing(size int, seq uint64) *ring {
	return &ring{size: size, from: seq, last: seq}
}

// push appends c, dropping the oldest change when full. Changes at or
// before last (already known) are ignored. Amortised O(1).
func (r *ring) push(c Change) {
	if c.Seq <= r.last && !(c.Seq == r.last && r.n > 0 && r.newest().seq == c.Seq) {
		return
	}
	r.last = c.Seq
	if len(r.buf) < r.size {
		r.buf = append(r.buf, stepOf(c))
		r.n++
		return
	}
	if r.n == len(r.buf) {
		r.from = r.buf[r.head].seq
		r.buf[r.head] = stepOf(c)
		r.head = (r.head + 1) % len(r.buf)
		return
	}
	r.buf[(r.head+r.n)%len(r.buf)] = stepOf(c)
	r.n++
}

func (r *ring) newest() step { return r.buf[(r.head+r.n-1)%len(r.buf)] }

// reset forgets everything: the board-window was replaced at seq.
func (r *ring) reset(seq uint64) {
	r.head, r.n, r.buf = 0, 0, r.buf[:0]
	r.from, r.last = seq, seq
}

// since returns the changes after seq s up to upto, oldest first, taking
// those after last from pending; false where the ring no longer reaches s.
// O(changes returned).
func (r *ring) since(s, upto uint64, pending []Change) ([]step, bool) {
	if s < r.from || s > upto {
		return nil, false
	}
	var out []step
	for i := 0; i < r.n; i++ {
		st := r.buf[(r.head+i)%len(r.buf)]
		if st.seq > s && st.seq <= upto {
			out = append(out, st)
		}
	}
	for _, c := range pending {
		if c.Seq > r.last && c.Seq > s && c.Seq <= upto {
			out = append(out, stepOf(c))
		}
	}
	return out, true
}

// rankBefore returns where the member at rank p (0: absent) after steps
// stood before them, undoing each step from the newest back. O(steps).
func rankBefore(member uint32, p int, steps []step) int {
	for i := len(steps) - 1; i >= 0; i-- {
		p = undo(steps[i], member, p)
	}
	return p
}

func undo(st step, member uint32, p int) int {
	o, n := int(st.old), int(st.new)
	switch {
	case st.member == member:
		return o
	case p == 0:
		return 0
	case o == 0 && n > 0 && p > n: // an insert at n pushed p down
		return p - 1
	case n == 0 && o > 0 && p >= o: // a removal at o pulled p up
		return p + 1
	case o > n && n > 0 && p > n && p <= o: // a move up from o to n
		return p - 1
	case o < n && o > 0 && p >= o && p < n: // a move down from o to n
		return p + 1
	}
	return p
}

// totalBefore returns the board-window's entries before steps, given total
// after them.
func totalBefore(total int, steps []step) int {
	if len(steps) == 0 {
		return total
	}
	st := steps[0]
	switch {
	case st.old == 0 && st.new > 0:
		return int(st.total) - 1
	case st.new == 0 && st.old > 0:
		return int(st.total) + 1
	}
	return int(st.total)
}
