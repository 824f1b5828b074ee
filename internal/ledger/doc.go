// Package ledger is one tenant's state as a pure function of its events:
// the boards and their day, week and month windows, settings, anti-cheat
// rules and the quarantine, tournaments (times and prizes), profiles, rank
// history, idempotency ids, cursors; the event and snapshot codecs; the
// notifications a state makes due; and the state diff of the audit replay.
//
// Apply is the only writer: State.Apply(seq, ev) reads nothing but the
// state, the event and its stream sequence (never a clock, a file, the
// network or map iteration order), and returns what it decided in an
// Outcome (results, errors, quarantines, whether the notification
// schedule moved). Any node that applies the same events holds the same
// state, whose Encode gives the same bytes. Reads take the time they are
// about as an argument (unix ms).
//
// It may import board, identity, internal/names and the standard library
// only (internal/layering enforces it), starts no goroutine, reads no
// clock and does no I/O: purity_test.go fails if a file does. The hub owns everything with a goroutine, a lock or I/O: NATS,
// the replica loop that applies events under its lock (SetYield), the
// goroutines that run a group event's lanes at once (SetLanes), snapshot
// files, publishing notifications.
//
// Concurrency: a State is not safe for concurrent use. One goroutine
// applies; readers hold the read lock of the lock under which it applies
// (the hub's replica.mu). The feed log (feed.go) has its own mutex, taken
// after that lock, because lanes of one event append to it at once and a
// live view peeks at it under the read lock.
package ledger
