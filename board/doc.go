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
// After Pugh (1990) and Redis's t_zset.c: p = 1/4, at most 32 levels, and
// every forward link above level 0 carries a span, the number of level-0
// steps it passes, so a node's rank is the sum of spans along its search
// path. Nodes live in one []uint64 arena, each a variable-length record
// with its levels inline, linked by uint32 word offsets rather than
// pointers: about 43 bytes a node plus 4 bytes of member index, no GC
// pointers to scan, and one cache miss per visited node. See arena.go.
//
// # Concurrency
//
// A Board is not safe for concurrent use: it has one owning goroutine,
// which applies mutations and serves reads (or guards them with its own
// lock). No read method writes to the board, so concurrent readers under a
// read lock are safe.
package board
