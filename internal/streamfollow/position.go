package streamfollow

import (
	"sync/atomic"
	"time"
)

// Position is a follower's place in its stream, shared by its fetcher, its
// watchdog and whoever learns of stored sequences (NoteStored). All
// atomic: safe for concurrent use. The zero value stands at the stream's
// start.
type Position struct {
	fetched atomic.Uint64 // stream sequence last handed on
	stored  atomic.Uint64 // highest sequence known stored: NoteStored
	waiting atomic.Int64  // unix ns since the fetcher waits in Next; 0 while it is not waiting
	behind  atomic.Int64  // unix ns since stored passed fetched, set when a caught-up follower learns of more
	made    atomic.Uint64 // consumers created: names them; more than one means one was replaced
}

// Start sets the sequence the follower stands at (a snapshot's), before
// it runs: it hands on what follows.
func (p *Position) Start(seq uint64) { p.fetched.Store(seq) }

// Fetched is the stream sequence last handed on.
func (p *Position) Fetched() uint64 { return p.fetched.Load() }

// Stored is the highest sequence known stored.
func (p *Position) Stored() uint64 { return p.stored.Load() }

// Consumers is how many consumers the follower created: more than one
// means one was replaced.
func (p *Position) Consumers() uint64 { return p.made.Load() }

// NoteStored records that the stream stored seq (an acknowledged write, or
// the stream's last sequence as a probe read it), so that the watchdog
// replaces a consumer that delivers nothing behind it. O(1).
func (p *Position) NoteStored(seq uint64) {
	for {
		cur := p.stored.Load()
		if seq <= cur {
			return
		}
		if p.stored.CompareAndSwap(cur, seq) {
			if at := p.fetched.Load(); cur <= at && seq > at { // it was caught up: behind from now
				p.behind.Store(time.Now().UnixNano())
			}
			return
		}
	}
}

// stalled reports whether, for stallAfter, the fetcher has waited in Next
// and been behind a stored sequence.
func (p *Position) stalled(now time.Time) bool {
	w := p.waiting.Load()
	return w != 0 && now.UnixNano()-max(w, p.behind.Load()) > int64(stallAfter) && p.stored.Load() > p.fetched.Load()
}
