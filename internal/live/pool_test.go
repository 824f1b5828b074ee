package live

import (
	"slices"
	"testing"
)

// TestWriterPoolQueue: connections leave the writers' queue in the order
// they came, each once, however takes and pushes interleave.
func TestWriterPoolQueue(t *testing.T) {
	p := newWriterPool(nil)
	conns := make([]*wsConn, 100)
	for i := range conns {
		conns[i] = &wsConn{}
	}
	var got []poolConn
	batch := make([]poolConn, 0, 16)
	next := 0
	for round := 0; len(got) < len(conns); round++ {
		for range round % 7 * 5 { // pushes of 0, 5, …, 30 between takes
			if next < len(conns) {
				p.push(conns[next])
				next++
			}
		}
		if p.head == len(p.queue) {
			continue // take would wait
		}
		got = append(got, p.take(batch)...)
		if len(p.queue)-p.head > next-len(got) || p.head > len(p.queue) {
			t.Fatalf("round %d: queue %d from %d, %d pushed, %d taken", round, len(p.queue), p.head, next, len(got))
		}
	}
	for i, c := range got {
		if c != poolConn(conns[i]) {
			t.Fatalf("connection %d came out at %d", slices.Index(conns, c.(*wsConn)), i)
		}
	}
}
