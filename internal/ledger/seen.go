package ledger

import (
	"crypto/sha256"
	"time"
)

// Idempotency ids. A board keeps every id applied on it with the original
// result, so that a repeat answers as the original did. The id itself is
// not kept: a 16-byte digest (the first half of its SHA-256) stands for
// it, so an id costs the same whatever its length (up to MaxIDLen bytes).
// Two ids sharing a digest would need a SHA-256 prefix collision; nobody
// can produce one.
//
// Retention. Ids are kept for ever unless the event carries a retention
// (Event.KeepIDs, from the hub's Config.IdempotencyRetention on the node that
// accepted it): applying such an event first forgets the ids accepted more
// than that long before the event's acceptance time. Only event contents
// decide it (never the clock or a node's flags), so every node forgets the
// same ids at the same event. Ids are forgotten in the order they were
// applied, oldest first, stopping at the first one still kept: with
// clocks of different nodes a little apart, an id may outlive its
// retention by that much, identically everywhere.
//
// Cost per id: 16 bytes of digest and a 56-byte entry per map slot (with
// the Swiss table's control byte and 7/8 load, about 83 bytes), 16 bytes
// in the order, so about 100 bytes; BenchmarkSeenIDs measures it.

// MinIdempotencyRetention is the shortest retention of idempotency ids:
// longer than a client's retries of one submission (their --write-timeout
// and backoff), which must find the id.
const MinIdempotencyRetention = time.Hour

// idDigest stands for an idempotency id.
type idDigest [16]byte

func digestID(id string) idDigest {
	sum := sha256.Sum256([]byte(id))
	return idDigest(sum[:16])
}

// seenEntry is what a repeat of an id answers, and when it was accepted.
type seenEntry struct {
	member          string // shares the identity index's copy
	score, subscore float64
	seq             uint64
	at              int64 // acceptance time, unix ms: retention only
	rank            uint32
	applied         bool
	reason          Reason // a quarantined item's rule (rules.go), with its qid
	qid             uint64
}

// seenIDs is one board's idempotency ids. Replica goroutine only.
type seenIDs struct {
	m     map[idDigest]seenEntry
	order []idDigest // digests in the order applied; order[head:] are kept
	head  int
}

func newSeenIDs() *seenIDs { return &seenIDs{m: make(map[idDigest]seenEntry)} }

// len returns how many ids are kept.
func (s *seenIDs) len() int { return len(s.m) }

// get returns the original result of the id d stands for. O(1).
func (s *seenIDs) get(d idDigest) (Result, bool) {
	e, ok := s.m[d]
	if !ok {
		return Result{}, false
	}
	return Result{Member: e.member, Score: e.score, Subscore: e.subscore, Rank: int(e.rank),
		Applied: e.applied, Seq: e.seq, Reason: e.reason, QID: e.qid}, true
}

// put records the result of the id d stands for, accepted at at. d must
// not be kept already. Amortised O(1).
func (s *seenIDs) put(d idDigest, at int64, r Result) {
	s.m[d] = seenEntry{member: r.Member, score: r.Score, subscore: r.Subscore, seq: r.Seq, at: at,
		rank: uint32(r.Rank), applied: r.Applied, reason: r.Reason, qid: r.QID}
	s.order = append(s.order, d)
}

// expire forgets the ids accepted before before, oldest first, stopping
// at the first one still kept. O(ids forgotten), amortised.
func (s *seenIDs) expire(before int64) {
	for s.head < len(s.order) {
		d := s.order[s.head]
		if s.m[d].at >= before {
			break
		}
		delete(s.m, d)
		s.head++
	}
	// Compact once the forgotten prefix is half the slice: each digest is
	// copied O(1) times on average.
	if s.head > 1024 && s.head*2 > len(s.order) {
		s.order = append(s.order[:0:0], s.order[s.head:]...)
		s.head = 0
	}
}

// each calls f for every kept id in the order applied.
func (s *seenIDs) each(f func(d idDigest, e seenEntry)) {
	for _, d := range s.order[s.head:] {
		f(d, s.m[d])
	}
}
