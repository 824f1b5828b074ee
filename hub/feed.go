package hub

import (
	"context"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/pace"
)

// The change feed carries every applied mutation of a board-window to one
// consumer (the live views) without ever blocking the replica goroutine:
//
//   - under the replica's write lock, apply appends each change to the
//     tenant's feed log (internal/ledger/feed.go: an append under a mutex
//     no reader holds for long), and the replica goroutine then wakes the
//     Hub's feed goroutine (a send that never blocks: see wakeFeedFor);
//   - the feed goroutine takes each tenant's pending changes under the
//     tenant's read lock, and hands each board-window's batch to Feed.Apply
//     with a Window that reads the board as it stands after exactly those
//     changes; then calls Feed.Flush with no lock held.
//
// When it drains is a deadline, not a tick (runFeed, paced by
// internal/pace): at once when it is idle, so that a change at light load
// reaches its watchers within milliseconds; while it is busy, changes gather and the next drain takes
// them all, so that under load the cost follows the drains, not the
// changes. A drain busy for d of the process's CPU (pace.Mark.Busy: its
// Flush and, with a FeedSettler, the writing of what it offered; at most
// its wall time w) is followed by a pause of 2d-w: the drain and its pause
// together are at most half busy, so one busy all through pauses as long
// again and one descheduled for half its wall time or more (by other
// processes) has rested already. The pause is at
// least pace.MinGap and never past its start plus Config.PushInterval: the
// loop never spins, push work gets at most about half the time, and a
// change waits at most about one PushInterval plus one drain's work.
//
// Why batch rather than push each change to the consumer: the consumer
// recomputes views from the board, which it may read only under the
// tenant's read lock; doing that once per drain per board-window, for all
// changes since the last one, is what makes the cost follow change rather
// than audience. Reading under the same lock the changes were taken under
// makes the batch and the board agree.

// FeedBatch is what happened to one board-window since the last tick.
type FeedBatch = ledger.FeedBatch

// Feed consumes the change feed. Apply runs under the tenant's read lock
// (keep it short, call nothing of the Hub); Flush runs after every Apply of
// a drain, with no lock. Both are called from the Hub's one feed goroutine.
type Feed interface {
	Apply(b FeedBatch, w Window)
	Flush()
}

type feedHolder struct{ f Feed }

// FeedSettler is a Feed whose Flush hands work on to other goroutines
// (writers of sockets). Settle returns once that work is done, or at
// deadline, or when ctx ends, whichever comes first; the feed goroutine
// calls it after each Flush, so that the next drain waits for the writers
// instead of piling offers on outboxes they have not emptied yet.
type FeedSettler interface {
	Feed
	Settle(ctx context.Context, deadline time.Time)
}

// SetFeed makes f the consumer of the change feed from the next drain on
// (nil stops it). Changes are recorded and drained whether or not a Feed is
// set, so memory stays bounded. Safe for concurrent use.
func (h *Hub) SetFeed(f Feed) { h.feed.Store(&feedHolder{f}) }

// wakeFeedFor tells the feed goroutine that r's changes may wait. Never
// blocks: one wake pending is enough, the drain takes every change of
// every replica marked. The mark spares a drain the read lock of every
// other tenant: with many tenants, the drains that follow single changes
// would otherwise cost O(tenants) locks each.
func (h *Hub) wakeFeedFor(r *replica) {
	r.feedDirty.Store(true)
	select {
	case h.feedWake <- struct{}{}:
	default:
	}
}

// runFeed drains the feed when woken, paced as the comment at the top of
// this file says, until ctx ends. A ticker at PushInterval drains every
// tenant too, for a change no wake announced (there should be none; it
// costs a read lock per tenant per interval, as the fixed tick did).
func (h *Hub) runFeed(ctx context.Context) {
	t := time.NewTicker(h.cfg.PushInterval)
	defer t.Stop()
	var next time.Time // the earliest start of the next drain
	for {
		all := false
		select {
		case <-ctx.Done():
			return
		case <-h.feedWake:
		case <-t.C:
			all = true
		}
		if !pace.SleepUntil(ctx, next) {
			return
		}
		m := pace.Start()
		h.drainFeed(ctx, all, m.Time().Add(h.cfg.PushInterval-pace.MinGap))
		end := time.Now()
		next = pace.Next(m.Time(), end, m.Busy(end), h.cfg.PushInterval)
	}
}

// drainFeed hands the pending changes of every tenant marked by a wake
// (all: of every tenant) to the Feed, then flushes and, for a FeedSettler,
// waits for what it offered to be written, until settle at the latest.
// Cost: a read lock per tenant drained, held while the Feed applies.
func (h *Hub) drainFeed(ctx context.Context, all bool, settle time.Time) {
	var f Feed
	if fh := h.feed.Load(); fh != nil {
		f = fh.f
	}
	any := false
	for _, r := range h.reg.openReplicas() {
		if r.feedDirty.Swap(false) || all {
			any = r.drainFeed(f) || any
		}
	}
	if any && f != nil {
		f.Flush()
		if fs, ok := f.(FeedSettler); ok {
			fs.Settle(ctx, settle)
		}
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
