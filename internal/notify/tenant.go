package notify

import (
	"sync/atomic"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

// Tenant is the notifier's side of one open tenant: the goroutine that
// applies the tenant's events reports what apply decided to it (Applied),
// and the notifier reads the tenant's state through it. The hub's replica
// holds one. A nil *Tenant hears nothing.
type Tenant struct {
	n    *Notifier
	name string
	read func(fn func(*ledger.State) error) error // fn under the tenant's read lock

	// moved reports that the tenant's notification schedule may have
	// moved (it opened, or an event's Outcome.Schedule): set by Applied,
	// taken by the notifier. due is the time (unix ms) the ledger gave as
	// its next due; notifier goroutine only.
	moved atomic.Bool
	due   int64
}

// Tenant returns the handle of tenant, whose state read gives to a
// function under the tenant's read lock, for one short read. It is
// visited at the next tick: what came due while the node was down.
func (n *Notifier) Tenant(tenant string, read func(fn func(*ledger.State) error) error) *Tenant {
	t := &Tenant{n: n, name: tenant, read: read}
	t.moved.Store(true)
	return t
}

// Applied hears what apply decided for an event the stream stored at
// stored: its quarantines and amendments go to the tenant's queue for the
// next tick, and a moved schedule has the tenant visited then. Called by
// the goroutine that applies the tenant's events, outside the tenant's
// lock. Never blocks on I/O.
func (t *Tenant) Applied(out *ledger.Outcome, stored time.Time) {
	if t == nil {
		return
	}
	for _, h := range out.Held {
		t.n.noteHeld(t.name, h.Board, h.Held)
	}
	for _, note := range out.Notes {
		t.n.noteAmended(t.name, note, stored)
	}
	if out.Schedule {
		t.moved.Store(true)
	}
}

// noteAmended queues a standings.amended notification of tenant (apply's
// Outcome.Notes) for the next tick in the tenant's queue (held.go), unless
// it is old news or the queue is full (counted and logged: DropQueueFull).
// Old news is an event stored longer than Dedup ago (a replay at start
// re-applies old amendments): JetStream's duplicate window would no longer
// drop it, so it would be published again. Never blocks on I/O.
func (n *Notifier) noteAmended(tenant string, note ledger.Notification, stored time.Time) {
	if time.Since(stored) > Dedup {
		return
	}
	note.Tenant = tenant
	if n.published(note.DedupID()) {
		return
	}
	n.queueAmended(note)
}
