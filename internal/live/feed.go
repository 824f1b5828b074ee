package live

import (
	"context"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/subscriptions"
)

// Feed returns the plane's consumer of the hub's change feed. The plane
// pushes nothing until its owner wires it, once: hub.SetFeed(p.Feed()). A
// hub has one feed consumer, so of two planes over one hub only the wired
// one pushes; building a plane never takes the feed from another.
func (p *Plane) Feed() hub.Feed { return p.feed }

// feed hands each drain's batches to the engine and times the drain; it
// is a hub.FeedSettler: the hub's next drain waits for the writer pool to
// write what this one offered (bounded by the push interval).
type feed struct {
	p     *Plane
	start time.Time // first Apply of the current tick; the hub's feed goroutine only
	// ended holds the boards whose live views this tick's batches ended
	// already (endOnce); the hub's feed goroutine only, emptied by Flush.
	ended map[boardRef]struct{}
}

// boardRef names one tenant's board.
type boardRef struct{ tenant, board string }

// endOnce ends the live views of b's deleted board at its first batch of
// the tick that says Deleted, and reports whether it did. A delete's
// batches (one per window of the board, each saying Deleted) share the
// board's generation, and EndBoard ends the views of every window of the
// board at once: the later batches would scan the engine's board-windows
// for nothing, once per window the board kept.
func (f *feed) endOnce(b hub.FeedBatch, gen uint64) bool {
	k := boardRef{b.Tenant, b.Board}
	if _, done := f.ended[k]; done {
		return false
	}
	if f.ended == nil {
		f.ended = map[boardRef]struct{}{}
	}
	f.ended[k] = struct{}{}
	f.p.endBoard(b.Tenant, b.Board, gen)
	return true
}

// Apply runs under the tenant's read lock: see hub.Feed.
func (f *feed) Apply(b hub.FeedBatch, w hub.Window) {
	if f.start.IsZero() {
		f.start = time.Now()
	}
	changes := make([]subscriptions.Change, len(b.Changes))
	for i, c := range b.Changes {
		changes[i] = subscriptions.Change(c)
	}
	if b.Deleted { // before the Apply: a board made again since goes on from its own views
		f.endOnce(b, w.Gen())
	}
	key := subscriptions.Key{Tenant: b.Tenant, Board: b.Board, Window: b.Window}
	f.p.eng.Apply(key, window{w}, changes, b.Reset)
	f.p.followBatch(b.Tenant, b.Board, b.Window, w)
}

// Flush runs with no lock: see hub.Feed.
func (f *feed) Flush() {
	clear(f.ended)
	f.p.eng.Flush()
	if !f.start.IsZero() {
		f.p.metrics.tick.Observe(time.Since(f.start).Seconds())
	}
	f.start = time.Time{}
}

// Settle waits for the writer pool to empty: see hub.FeedSettler.
func (f *feed) Settle(ctx context.Context, deadline time.Time) {
	f.p.pool.settle(ctx, deadline)
}

var _ hub.FeedSettler = (*feed)(nil)

// window adapts hub.Window to subscriptions.Window.
type window struct{ hub.Window }

func (w window) Profile(h uint32) subscriptions.Profile {
	return subscriptions.Profile(w.Window.Profile(h))
}

func (w window) Pending() []subscriptions.Change {
	hp := w.Window.Pending()
	out := make([]subscriptions.Change, len(hp))
	for i, c := range hp {
		out[i] = subscriptions.Change(c)
	}
	return out
}
