package notify

import (
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

// Quarantine notifications. Apply reports each quarantine (noteHeld) to a
// queue per tenant, bounded so that one tenant's flood of cheats neither
// grows memory nor takes another tenant's room. A quarantine that finds
// its tenant's queue full is counted (rankwire_notifications_dropped_total
// {reason="buffer_full"}) and logged at most once a minute per tenant, and
// it is not lost: the tenant is marked, and from the next tick the notifier
// walks the tenant's held submissions in the ledger (ledger.HeldNotes), a
// queue's worth per tick, and publishes those it has not published. A
// quarantine that exists and is at most Dedup old is so always
// notified; one released (accepted or rejected) before the walk reaches it
// is not.

// maxHeldPerTenant bounds one tenant's quarantines waiting for the next
// tick, and the quarantines a re-derivation adds per tick. At about 300
// bytes each, 2.4 MB per flooding tenant at most.
const maxHeldPerTenant = 8192

// dropLogEvery is how often a tenant's dropped notifications are logged.
const dropLogEvery = time.Minute

// Reasons for rankwire_notifications_dropped_total.
const (
	// DropBufferFull: a quarantine found its tenant's queue full; it is
	// derived again from the ledger state later.
	DropBufferFull = "buffer_full"
	// DropQueueFull: a standings.amended notification found its tenant's
	// queue full; it is not published (amendments are admin actions: a
	// queue's worth within half a second is not expected).
	DropQueueFull = "queue_full"
)

// heldNote is a quarantine as apply reports it.
type heldNote struct {
	board string
	held  ledger.Held
}

// heldQueue is one tenant's quarantines waiting for the next tick.
type heldQueue struct {
	notes    []heldNote
	amended  []ledger.Notification // standings.amended notifications (Tenant.Applied)
	overflow bool                  // a quarantine was not queued: derive them from the state
}

// heldWalk is a re-derivation under way: where it resumes, and whether
// the tenant's queue overflowed again since it started (the walk restarts
// then, as a new quarantine may sit before its cursor).
type heldWalk struct {
	at    ledger.NoteCursor
	again bool
}

// dropKey labels rankwire_notifications_dropped_total.
type dropKey struct{ tenant, reason string }

// Drop is a count of notifications not queued or not published.
type Drop struct {
	Tenant, Reason string
	Count          uint64
}

// noteHeld records a quarantine for the next tick. Never blocks on I/O:
// the log line of an overflow is written outside the lock.
func (n *Notifier) noteHeld(tenant, board string, h ledger.Held) {
	if n == nil {
		return
	}
	n.mu.Lock()
	q := n.queueLocked(tenant)
	if len(q.notes) < n.queueCap() {
		q.notes = append(q.notes, heldNote{board, h})
		n.mu.Unlock()
		return
	}
	q.overflow = true
	logNow := n.dropLocked(tenant, DropBufferFull, n.cfg.Now().UnixMilli())
	n.mu.Unlock()
	if logNow {
		n.cfg.Log.Warn("hub: a tenant's quarantine notifications overflow its queue; they will be derived from the ledger",
			"tenant", tenant, "queue", n.queueCap())
	}
}

// queueAmended queues note (standings.amended) in its tenant's queue, or
// counts and logs it as dropped where the queue is full. Never blocks on
// I/O: the log line is written outside the lock.
func (n *Notifier) queueAmended(note ledger.Notification) {
	n.mu.Lock()
	q := n.queueLocked(note.Tenant)
	if len(q.amended) < n.queueCap() {
		q.amended = append(q.amended, note)
		n.mu.Unlock()
		return
	}
	logNow := n.dropLocked(note.Tenant, DropQueueFull, n.cfg.Now().UnixMilli())
	n.mu.Unlock()
	if logNow {
		n.cfg.Log.Warn("hub: a tenant's standings.amended notifications overflow its queue; dropped",
			"tenant", note.Tenant, "id", note.ID, "queue", n.queueCap())
	}
}

// queueCap returns the bound of a tenant's queue.
func (n *Notifier) queueCap() int {
	if c := n.heldCap.Load(); c > 0 {
		return int(c)
	}
	return maxHeldPerTenant
}

func (n *Notifier) queueLocked(tenant string) *heldQueue {
	if n.held == nil {
		n.held = map[string]*heldQueue{}
	}
	q := n.held[tenant]
	if q == nil {
		q = &heldQueue{}
		n.held[tenant] = q
	}
	return q
}

// dropLocked counts a notification of tenant dropped for reason at now
// (unix ms), and reports whether to log it: at most once a dropLogEvery
// per tenant and reason. The caller logs after unlocking n.mu.
func (n *Notifier) dropLocked(tenant, reason string, now int64) (logNow bool) {
	key := dropKey{tenant, reason}
	if n.drops == nil {
		n.drops = map[dropKey]uint64{}
	}
	n.drops[key]++
	if last, ok := n.logged[key]; ok && now-last < dropLogEvery.Milliseconds() {
		return false
	}
	if n.logged == nil {
		n.logged = map[dropKey]int64{}
	}
	n.logged[key] = now
	return true
}

// Dropped returns the counts of notifications not queued or not
// published, by tenant and reason (rankwire_notifications_dropped_total).
func (n *Notifier) Dropped() []Drop {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]Drop, 0, len(n.drops))
	for k, c := range n.drops {
		out = append(out, Drop{Tenant: k.tenant, Reason: k.reason, Count: c})
	}
	return out
}

// takeHeld returns the quarantines noted since the last tick that are
// recent enough to be news (a replay at start re-applies old ones) and not
// published yet, as notifications, and starts a re-derivation for each
// tenant whose queue overflowed.
func (n *Notifier) takeHeld(now int64) []ledger.Notification {
	n.mu.Lock()
	out := n.retry
	n.retry = nil
	var held []ledger.Notification
	for tenant, q := range n.held {
		for _, hn := range q.notes {
			if now-hn.held.At <= Dedup.Milliseconds() {
				held = append(held, ledger.QuarantineNote(tenant, hn.board, hn.held))
			}
		}
		q.notes = q.notes[:0]
		held = append(held, q.amended...)
		q.amended = nil
		if q.overflow {
			q.overflow = false
			n.walkLocked(tenant)
		}
	}
	n.mu.Unlock()
	for _, note := range held {
		if !n.published(note.DedupID()) {
			out = append(out, note)
		}
	}
	return out
}

// walkLocked starts a re-derivation of tenant's quarantine notifications,
// or marks the one under way to start again when it ends.
func (n *Notifier) walkLocked(tenant string) {
	if n.walks == nil {
		n.walks = map[string]*heldWalk{}
	}
	if w := n.walks[tenant]; w != nil {
		w.again = true
		return
	}
	n.walks[tenant] = &heldWalk{}
}

// rederive returns, for each open tenant with a re-derivation under way,
// up to maxHeldPerTenant of its quarantines not published yet, derived from
// its state. Notifier goroutine only.
func (n *Notifier) rederive(open []*Tenant, now int64) []ledger.Notification {
	var out []ledger.Notification
	for _, t := range open {
		n.mu.Lock()
		w := n.walks[t.name]
		n.mu.Unlock()
		if w == nil {
			continue
		}
		var (
			at   ledger.NoteCursor
			done bool
		)
		_ = t.read(func(st *ledger.State) error {
			var notes []ledger.Notification
			notes, at, done = st.HeldNotes(t.name, now, w.at, n.queueCap(),
				func(id string) bool { return n.published(t.name + "/" + id) })
			out = append(out, notes...)
			return nil
		})
		n.mu.Lock()
		switch {
		case !done:
			w.at = at
		case w.again:
			*w = heldWalk{}
		default:
			delete(n.walks, t.name)
		}
		n.mu.Unlock()
	}
	return out
}

// requeue puts back a quarantine whose publish failed.
func (n *Notifier) requeue(note ledger.Notification) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.retry = append(n.retry, note)
}
