// Package fingerprint decides whether one node's copy of a tenant's state
// has left the others': at every checkpoint (a stream sequence that is a
// multiple of the spacing) each node hashes its state's snapshot encoding
// (Of), publishes it (Report), and compares its own with the cluster's
// (Tally). A node whose checkpoint differs from the one a majority of the
// cluster published at the same sequence has diverged.
//
// Why a hash of the snapshot bytes: a tenant's state is a pure function of
// its stream (internal/ledger: no clock, no I/O) and its encoding is
// canonical, so every node that applied the same events holds
// byte-identical snapshots at the same sequence (hub's determinism test
// replays and compares them). The hash therefore catches every way a copy
// can go wrong, whatever the cause: an event its store handed it changed
// (a flipped bit, a truncated block), a snapshot file that decodes but is
// wrong, a bug that made apply depend on something else. A hash of the
// events alone would miss a wrong snapshot a node started from. The cost is
// one encoding per checkpoint (0.18 s at 1 M members, as a snapshot's), so
// checkpoints are sparse: DefaultEvery.
//
// The package is pure: no clock, no goroutines, no I/O; it imports the
// standard library only. None of its types is safe for concurrent use.
package fingerprint

import "crypto/sha256"

// DefaultEvery is the checkpoint spacing in stream sequences used when a
// caller gives none: a checkpoint every 100,000 events, as often as the
// hub's snapshots (each costs one encoding of the state on the replica
// goroutine, 0.18 s at a million members: more often would put it on the
// apply path ten times as much). Group commit puts up to 1,000 submissions
// in one event, so at a few hundred events a second a busy tenant is
// checked every few minutes.
const DefaultEvery = 100_000

// Sum is one checkpoint's hash.
type Sum [sha256.Size]byte

// Checkpoint is the hash of a tenant's state at stream sequence Seq.
type Checkpoint struct {
	Seq uint64
	Sum Sum
}

// Due reports whether a state at seq is at a checkpoint for spacing every
// (zero means DefaultEvery). Sequence 0, the empty state, never is. O(1).
func Due(seq, every uint64) bool {
	if every == 0 {
		every = DefaultEvery
	}
	return seq != 0 && seq%every == 0
}

// Of returns the checkpoint of a state at seq whose snapshot encoding is
// snapshot. O(len(snapshot)).
func Of(seq uint64, snapshot []byte) Checkpoint {
	return Checkpoint{Seq: seq, Sum: sha256.Sum256(snapshot)}
}
