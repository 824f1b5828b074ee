package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/ledger"
)

// Notifications. When a board ends, when a day, week or month window
// closes, and when a submission is quarantined, the gateway publishes a
// Notification to the tenant's subject rw.<tenant>.notify, stored in the
// stream NotifyStream, from which webhooks are delivered (package webhook).
//
// Every node derives the same notifications from the same state, and every
// node publishes them: each carries an ID made of what it is about
// ("board.ended:weekly:1796342400000"), which is also its JetStream message
// id, and the stream keeps ids for NotifyDedup, so each is stored once
// whichever nodes publish it and however often. A node that was down
// publishes on its return what came due meanwhile, up to NotifyDedup old;
// a node remembers what it published, so that a due notification costs one
// publish per node, not one per tick.
//
// Timing: a board's end and a window's close are final ledger.FinalAfter after
// the time (a write accepted just before may still arrive), so their
// notifications go out then, with the final rows. A quarantine goes out
// when the node applies it.

// The notifications' stream and its limits.
const (
	NotifyStream = "rankwire_notify"
	notifyMaxAge = 72 * time.Hour // kept for delivery: webhooks retry for 24 h (NotifyDedup: ids remembered)
	notifyTick   = 500 * time.Millisecond
)

// NotifySubject returns the subject a tenant's notifications go to.
func NotifySubject(tenant string) string { return "rw." + tenant + ".notify" }

// notifier is the Hub's side of notifications: the quarantines apply
// reported, and what this node has published.
type notifier struct {
	ticks atomic.Uint64 // passes of notifyDue so far (tests wait on it)

	mu     sync.Mutex
	held   []heldNote       // quarantines applied since the last tick
	retry  []Notification   // quarantines whose publish failed
	sent   map[string]int64 // ids published, with when (unix ms), pruned after NotifyDedup
	pruned int64            // when sent was last pruned (unix ms)
}

// heldNote is a quarantine as apply reports it.
type heldNote struct {
	tenant, board string
	held          Held
}

// maxHeldNotes bounds the quarantines waiting for the next tick: a flood
// of cheats within one tick must not grow memory. Past it a quarantine
// gets no notification (it is still held, and listed by GET .../quarantine).
const maxHeldNotes = 100_000

// noteHeld records a quarantine for the next tick. Never blocks on I/O.
func (n *notifier) noteHeld(tenant, board string, h Held) {
	if n == nil {
		return
	}
	n.mu.Lock()
	if len(n.held) < maxHeldNotes {
		n.held = append(n.held, heldNote{tenant, board, h})
	}
	n.mu.Unlock()
}

// openNotify creates (or updates) the notifications' stream.
func (h *Hub) openNotify(ctx context.Context) error {
	return h.api.do(func() error {
		_, err := h.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:       NotifyStream,
			Subjects:   []string{NotifySubject("*")},
			Storage:    jetstream.FileStorage,
			Retention:  jetstream.LimitsPolicy,
			MaxAge:     notifyMaxAge,
			Duplicates: NotifyDedup,
			Replicas:   h.cfg.Replicas,
		})
		return err
	})
}

// runNotify opens the stream (retrying while a cluster forms), then every
// notifyTick publishes what came due. It stops when ctx ends.
func (h *Hub) runNotify(ctx context.Context) {
	wait := time.Second
	for {
		octx, cancel := context.WithTimeout(ctx, replicasTimeout)
		err := h.openNotify(octx)
		cancel()
		if err == nil {
			break
		}
		h.log.Warn("hub: the notifications' stream cannot be opened yet; retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
	t := time.NewTicker(notifyTick)
	defer t.Stop()
	for {
		h.notifyDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// notifyDue publishes the notifications due now that this node has not
// published yet.
func (h *Hub) notifyDue(ctx context.Context) {
	now := h.cfg.Now().UnixMilli()
	var due []Notification
	h.mu.RLock()
	tenants := make([]*replica, 0, len(h.tenants))
	for _, r := range h.tenants {
		tenants = append(tenants, r)
	}
	h.mu.RUnlock()
	for _, r := range tenants {
		r.mu.RLock()
		due = append(due, r.st.DueNotifications(r.tenant, now, h.note.published)...)
		r.mu.RUnlock()
	}
	due = append(due, h.note.takeHeld(now)...)
	for _, n := range due {
		if err := h.publishNote(ctx, n); err != nil {
			if ctx.Err() == nil {
				h.log.Warn("hub: a notification was not published; retrying", "id", n.ID, "err", err)
			}
			if n.Type == "submission.quarantined" {
				h.note.requeue(n)
			}
			continue
		}
		h.note.markSent(n.ID, now)
	}
	h.note.prune(now)
	h.note.ticks.Add(1)
}

// publishNote publishes n with its ID as the message id.
func (h *Hub) publishNote(ctx context.Context, n Notification) error {
	data, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode notification: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	msg := nats.NewMsg(NotifySubject(n.Tenant))
	msg.Data = data
	msg.Header.Set(jetstream.MsgIDHeader, n.ID)
	_, err = h.js.PublishMsg(ctx, msg)
	return err
}

// published reports whether this node published id already.
func (n *notifier) published(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.sent[id]
	return ok
}

func (n *notifier) markSent(id string, now int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sent == nil {
		n.sent = map[string]int64{}
	}
	n.sent[id] = now
}

// prune forgets ids published more than NotifyDedup ago, at most once a
// minute: a walk of every id every tick would cost more than it frees.
func (n *notifier) prune(now int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if now-n.pruned < time.Minute.Milliseconds() {
		return
	}
	n.pruned = now
	for id, at := range n.sent {
		if now-at > NotifyDedup.Milliseconds() {
			delete(n.sent, id)
		}
	}
}

// takeHeld returns the quarantines noted since the last tick that are
// recent enough to be news (a replay at start re-applies old ones) and not
// published yet, as notifications.
func (n *notifier) takeHeld(now int64) []Notification {
	n.mu.Lock()
	held, out := n.held, n.retry
	n.held, n.retry = nil, nil
	n.mu.Unlock()
	for _, hn := range held {
		if now-hn.held.At > NotifyDedup.Milliseconds() {
			continue
		}
		note := ledger.QuarantineNote(hn.tenant, hn.board, hn.held)
		if !n.published(note.ID) {
			out = append(out, note)
		}
	}
	return out
}

// requeue puts back a quarantine whose publish failed.
func (n *notifier) requeue(note Notification) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.retry = append(n.retry, note)
}
