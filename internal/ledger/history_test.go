package ledger

import (
	"testing"
	"unsafe"
)

// The ring keeps at most maxHistory points for all members together: a
// busy member's old points and a quiet member's only ones are overwritten,
// the member index shrinks with them, and a snapshot restores the same
// answers.
func TestHistoryRingBounds(t *testing.T) {
	if size := unsafe.Sizeof(point{}); size != 48 { // docs/PROTOCOL.md says a point costs 48 bytes
		t.Errorf("a history point is %d bytes", size)
	}
	var hs history
	hs.add(point{member: 7, rank: 1, total: 1, score: 1})
	for i := range maxHistory + 500 {
		hs.add(point{member: uint32(i % 3), at: int64(i), rank: 1, total: 1, score: float64(i)})
	}
	if len(hs.pts) != maxHistory || len(hs.head) != 3 {
		t.Fatalf("ring %d points, %d members indexed", len(hs.pts), len(hs.head))
	}
	if got := hs.recent(7, 0); len(got) != 0 {
		t.Fatalf("an overwritten member still has %+v", got)
	}
	got := hs.recent(1, 0)
	if len(got) != MaxHistoryPoints || got[0].At != maxHistory+500-2 || got[1].At != got[0].At-3 {
		t.Fatalf("member 1: %d points, newest %+v", len(got), got[:2])
	}
	w := &snapWriter{}
	w.history(&hs)
	r := &snapReader{buf: w.buf}
	var back history
	r.history(&back)
	if r.err != nil || len(r.buf) != 0 || back.next != hs.next || len(back.pts) != len(hs.pts) {
		t.Fatalf("decoded: %v, next %d/%d, ring %d/%d", r.err, back.next, hs.next, len(back.pts), len(hs.pts))
	}
	for m := range uint32(8) {
		a, b := hs.recent(m, 0), back.recent(m, 0)
		if len(a) != len(b) || (len(a) > 0 && a[len(a)-1] != b[len(b)-1]) {
			t.Fatalf("member %d: %d points before, %d after the snapshot", m, len(a), len(b))
		}
	}
	for _, n := range []uint64{0, 1, 64, 65, 128, 129, maxHistory, maxHistory + 1, 1 << 40} {
		var g history
		for range min(n, 3*maxHistory) {
			g.add(point{})
		}
		if n <= 3*maxHistory && capFor(n) != len(g.pts) {
			t.Errorf("capFor(%d) = %d, the ring has %d", n, capFor(n), len(g.pts))
		}
	}
}
