// Package board owns the ranked set: a skip list with span counters that
// keeps one board-window's entries in a total, deterministic order and
// answers rank, rank → entry and range-by-rank in O(log N) (+ rows).
//
// It imports the standard library only: it knows nothing of NATS, HTTP,
// JSON or external member ids. Members are dense uint32 handles from the
// identity index.
//
// # Order
//
// Entries order by score (per Config.Order), then subscore (per
// Config.SubscoreOrder), then the sequence at which the entry reached its
// score (earliest first unless Config.Tiebreak is LatestFirst), then member
// (Config.CompareMembers). Equal inputs give equal boards on every node: the
// random level of a node changes speed, never ranks.
//
// # Layout
//
// An unrolled skip list. Entries sit in leaves, sorted blocks of up to 128
// stored column by column (leaf.go); one tower per leaf forms a skip list
// after Pugh (1990) and Redis's t_zset.c, p = 1/4, at most 32 levels, with
// a copy of its leaf's first key, so a search compares towers only and
// reads one leaf at the end (tower.go). Every link above level 0 carries a
// span, the number of entries (not towers) it passes, so an entry's rank is
// the sum of spans along the path to its leaf plus its slot:
//
//	level 2  [H]---------------------------------17--------------->[T3]--9--> nil
//	level 1  [H]----------8------------>[T2]------9--------------->[T3]--9--> nil
//	level 0  [H]->[T1]------->[T2]------------->[T3]---------> nil
//	               |          |                 |
//	leaves         8 entries  9 entries         9 entries
//	ranks          1..8       9..17             18..26
//
// Towers live in one []uint64 arena, linked by uint32 word offsets; leaves
// in pages of fixed-size blocks; the member index maps a member to its
// leaf. None of it holds a Go pointer, so the garbage collector never scans
// it. A full leaf passes its last entry to the next leaf or splits in two,
// a thin one takes in its successor, so leaves stay about three quarters
// full: ~45 bytes a member with the index. At a million members the
// ~11,000 towers fit in the L2 cache; a search costs cache hits in the
// towers and one miss in the leaf (four lines, fetched in parallel), where
// a skip list of entries walks ~25 dependent misses.
//
// # Concurrency
//
// A Board is not safe for concurrent use: it has one owning goroutine,
// which applies mutations and serves reads (or guards them with its own
// lock). No read method writes to the board, so concurrent readers under a
// read lock are safe.
package board
