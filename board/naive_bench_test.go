package board_test

import (
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/rankwire/rankwire/board"
)

// naiveMaxN is the largest size the naive peer runs at: an update costs
// O(N log N), and building the peers' data sets should not take minutes.
const naiveMaxN = 100_000

// naivePeer is the "before" code of docs/ARCHITECTURE.md ("The problem it solves"): a slice of entries under one
// mutex, a linear scan to find a member, and sort.Slice after every write.
// Reads index the sorted slice.
type naivePeer struct {
	mu      sync.Mutex // guards entries
	entries []board.Entry

	n    int
	seq  uint64 // the last sequence used, as on the board
	rows []board.Row
}

// buildNaive returns the slice of members 1..n with peerScores(n) at
// sequences 1..n, sorted once, with room for n+extra.
func buildNaive(n, extra int) *naivePeer {
	p := &naivePeer{entries: make([]board.Entry, 0, n+extra), n: n, rows: make([]board.Row, 0, 100)}
	next := peerScores(n)
	for m := 1; m <= n; m++ {
		p.seq++
		p.entries = append(p.entries, board.Entry{Member: uint32(m), Score: next(), Seq: p.seq})
	}
	p.sortLocked()
	return p
}

func loadNaivePeer(_ *peerEnv, _ *testing.B, n int) peerOps {
	p := buildNaive(n, insertBatch(n))
	return peerOps{
		"update": p.update, "insert": p.insert, "rank": p.rank,
		"at": p.at, "top100": p.top100, "around5": p.around5,
	}
}

func (p *naivePeer) sortLocked() {
	sort.Slice(p.entries, func(i, j int) bool { return peerLess(p.entries[i], p.entries[j]) })
}

// indexLocked returns the index of member's entry, or -1.
func (p *naivePeer) indexLocked(member uint32) int {
	for i := range p.entries {
		if p.entries[i].Member == member {
			return i
		}
	}
	return -1
}

// submit overwrites or appends member's entry and re-sorts.
func (p *naivePeer) submit(member uint32, r *rand.Rand) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	e := board.Entry{Member: member, Score: randScore(r), Seq: p.seq}
	if i := p.indexLocked(member); i >= 0 {
		p.entries[i] = e
	} else {
		p.entries = append(p.entries, e)
	}
	p.sortLocked()
}

// rowsLocked appends the rows of ranks from..to, clipped to the slice.
func (p *naivePeer) rowsLocked(from, to int) {
	p.rows = p.rows[:0]
	for r := max(from, 1); r <= min(to, len(p.entries)); r++ {
		p.rows = append(p.rows, board.Row{Rank: r, Entry: p.entries[r-1]})
	}
}

func (p *naivePeer) update(b *testing.B, r *rand.Rand) {
	for range b.N {
		p.submit(randMember(r, p.n), r)
	}
}

func (p *naivePeer) insert(b *testing.B, r *rand.Rand) {
	insertBatches(b, p.n, func(first uint32, k int) {
		for m := range uint32(k) {
			p.submit(first+m, r)
		}
	}, func(first uint32, _ int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.entries = slices.DeleteFunc(p.entries, func(e board.Entry) bool { return e.Member >= first })
	})
}

func (p *naivePeer) rank(b *testing.B, r *rand.Rand) {
	for range b.N {
		p.mu.Lock()
		i := p.indexLocked(randMember(r, p.n))
		p.mu.Unlock()
		if i < 0 {
			b.Fatal("a member is missing")
		}
	}
}

func (p *naivePeer) at(b *testing.B, r *rand.Rand) {
	for range b.N {
		rank := 1 + r.IntN(p.n)
		p.mu.Lock()
		p.rowsLocked(rank, rank)
		p.mu.Unlock()
	}
}

func (p *naivePeer) top100(b *testing.B, _ *rand.Rand) {
	for range b.N {
		p.mu.Lock()
		p.rowsLocked(1, 100)
		p.mu.Unlock()
	}
	if len(p.rows) != min(100, p.n) {
		b.Fatalf("top100 returned %d rows", len(p.rows))
	}
}

func (p *naivePeer) around5(b *testing.B, r *rand.Rand) {
	for range b.N {
		p.mu.Lock()
		i := p.indexLocked(randMember(r, p.n))
		p.rowsLocked(i+1-5, i+1+5)
		p.mu.Unlock()
		if i < 0 {
			b.Fatal("a member is missing")
		}
	}
}
