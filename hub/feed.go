package hub

import (
	"context"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

// The change feed carries every applied mutation of a board-window to one
// consumer (the live views) without ever blocking the replica goroutine:
//
//   - under the replica's write lock, apply appends each change to the
//     tenant's feed log (internal/ledger/feed.go: an append under a mutex
//     no reader holds for long);
//   - the Hub's feed goroutine wakes every Config.PushInterval, takes each
//     tenant's pending changes under the tenant's read lock, and hands each
//     board-window's batch to Feed.Apply with a Window that reads the board
//     as it stands after exactly those changes; then calls Feed.Flush with
//     no lock held.
//
// Why drain at the tick rather than push each change to the consumer: the
// consumer recomputes views from the board, which it may read only under
// the tenant's read lock; doing that once per tick per board-window, for all
// changes since the last one, is what makes the cost follow change rather
// than audience. Reading under the same lock the changes were taken under
// makes the batch and the board agree.

// FeedBatch is what happened to one board-window since the last tick.
type FeedBatch = ledger.FeedBatch

// Feed consumes the change feed. Apply runs under the tenant's read lock
// (keep it short, call nothing of the Hub); Flush runs after every Apply of
// a tick, with no lock. Both are called from the Hub's one feed goroutine.
type Feed interface {
	Apply(b FeedBatch, w Window)
	Flush()
}

type feedHolder struct{ f Feed }

// SetFeed makes f the consumer of the change feed from the next tick on
// (nil stops it). Changes are recorded and drained whether or not a Feed is
// set, so memory stays bounded. Safe for concurrent use.
func (h *Hub) SetFeed(f Feed) { h.feed.Store(&feedHolder{f}) }

// runFeed drains the feed every interval until the Hub closes.
func (h *Hub) runFeed(ctx context.Context) {
	t := time.NewTicker(h.cfg.PushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.drainFeed()
		}
	}
}

// drainFeed hands every tenant's pending changes to the Feed, then flushes.
// Cost: a read lock per tenant with changes, held while the Feed applies.
func (h *Hub) drainFeed() {
	var f Feed
	if fh := h.feed.Load(); fh != nil {
		f = fh.f
	}
	any := false
	for _, r := range h.reg.openReplicas() {
		any = r.drainFeed(f) || any
	}
	if any && f != nil {
		f.Flush()
	}
}

func (r *replica) drainFeed(f Feed) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.st.TakeFeed(func(b FeedBatch, w Window) {
		if f != nil {
			b.Tenant = r.tenant
			f.Apply(b, w)
		}
	})
}
