package board_test

import (
	"math/rand/v2"
	"testing"

	"github.com/rankwire/rankwire/board"
	"github.com/tidwall/btree"
)

// btreePeer is a counted B-tree used as an order-statistics tree, the strong
// in-process peer: tidwall/btree keeps a count in every node, so GetAt finds
// the entry at an index in O(log N). Entries order as on the board, and a map
// from member to entry finds the item an update replaces. The tree takes no
// locks: like a board, it has one owner. It has no rank-of-item lookup.
type btreePeer struct {
	tree    *btree.BTreeG[board.Entry]
	entries map[uint32]board.Entry
	n       int
	seq     uint64 // the last sequence used, as on the board
	rows    []board.Row
}

// buildBTree returns a tree of members 1..n with peerScores(n) at sequences
// 1..n, its map sized for n+extra members.
func buildBTree(n, extra int) *btreePeer {
	p := &btreePeer{
		tree:    btree.NewBTreeGOptions(peerLess, btree.Options{NoLocks: true}),
		entries: make(map[uint32]board.Entry, n+extra),
		n:       n,
		rows:    make([]board.Row, 0, 100),
	}
	next := peerScores(n)
	for m := 1; m <= n; m++ {
		p.seq++
		p.set(board.Entry{Member: uint32(m), Score: next(), Seq: p.seq})
	}
	return p
}

func loadBTreePeer(_ *peerEnv, _ *testing.B, n int) peerOps {
	p := buildBTree(n, insertBatch(n))
	return peerOps{"update": p.update, "insert": p.insert, "at": p.at, "top100": p.top100}
}

// set gives e.Member the entry e: delete the old item, insert the new one.
func (p *btreePeer) set(e board.Entry) {
	if old, ok := p.entries[e.Member]; ok {
		p.tree.Delete(old)
	}
	p.tree.Set(e)
	p.entries[e.Member] = e
}

func (p *btreePeer) submit(m uint32, r *rand.Rand) {
	p.seq++
	p.set(board.Entry{Member: m, Score: randScore(r), Seq: p.seq})
}

func (p *btreePeer) update(b *testing.B, r *rand.Rand) {
	for range b.N {
		p.submit(randMember(r, p.n), r)
	}
}

func (p *btreePeer) insert(b *testing.B, r *rand.Rand) {
	insertBatches(b, p.n, func(first uint32, k int) {
		for m := range uint32(k) {
			p.submit(first+m, r)
		}
	}, func(first uint32, k int) {
		for m := range uint32(k) {
			p.tree.Delete(p.entries[first+m])
			delete(p.entries, first+m)
		}
	})
}

func (p *btreePeer) at(b *testing.B, r *rand.Rand) {
	for range b.N {
		if _, ok := p.tree.GetAt(r.IntN(p.n)); !ok {
			b.Fatal("an index is missing")
		}
	}
}

// top100 copies the first 100 entries into rows, as Board.Range does.
func (p *btreePeer) top100(b *testing.B, _ *rand.Rand) {
	for range b.N {
		rows := p.rows[:0]
		p.tree.Scan(func(e board.Entry) bool {
			rows = append(rows, board.Row{Rank: len(rows) + 1, Entry: e})
			return len(rows) < 100
		})
		p.rows = rows
	}
	if len(p.rows) != min(100, p.n) {
		b.Fatalf("top100 returned %d rows", len(p.rows))
	}
}
