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
		f.p.endBoard(b.Tenant, b.Board, w.Gen())
	}
	key := subscriptions.Key{Tenant: b.Tenant, Board: b.Board, Window: b.Window}
	f.p.eng.Apply(key, window{w}, changes, b.Reset)
	f.p.followBatch(b.Tenant, b.Board, b.Window, w)
}

// Flush runs with no lock: see hub.Feed.
func (f *feed) Flush() {
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
