package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Notifications. When a board ends, when a day, week or month window
// closes, and when a submission is quarantined, the gateway publishes a
// Notification (built by the ledger: internal/ledger/notify.go) to the
// tenant's subject rw.<tenant>.notify, stored in the stream NotifyStream,
// from which webhooks are delivered (package webhook).
//
// Every node publishes every notification, with its DedupID (tenant and
// ID) as the JetStream message id; the stream keeps ids for NotifyDedup,
// so each is stored once whichever nodes publish it, and two tenants'
// notifications with the same ID are both stored. A node that was down publishes on its return
// what came due meanwhile, up to NotifyDedup old; a node remembers what it
// published, so that a due notification costs one publish per node.

// The notifications' stream and its limits.
const (
	NotifyStream = "rankwire_notify"
	notifyMaxAge = 72 * time.Hour // kept for delivery: webhooks retry for 24 h (NotifyDedup: ids remembered)
	notifyTick   = 500 * time.Millisecond
)

// NotifySubject returns the subject a tenant's notifications go to.
func NotifySubject(tenant string) string { return "rw." + tenant + ".notify" }

// notifier is the Hub's side of notifications: it owns the notifications'
// stream and the goroutine that publishes them (run), the quarantines apply
// reported, and what this node has published.
//
// It visits a tenant (takes its read lock and asks the ledger what is due)
// only when something may be due: when the tenant's schedule moved (it
// opened, or an event changed a board's settings or deleted one:
// Outcome.Schedule, replica.noteMoved), when the time the ledger gave as
// its next due (NextDue) has come, or when a publish of its notes failed.
// Every other tick costs an atomic load per tenant.
type notifier struct {
	ticks  atomic.Uint64 // passes of due so far (tests wait on it)
	visits atomic.Uint64 // tenants visited so far (tests count them)
	// heldCap is a tenant's queue of quarantines (notify_held.go); zero
	// means maxHeldPerTenant. Tests lower it.
	heldCap atomic.Int64

	// Set before run starts, then only read.
	js       jetstream.JetStream
	api      *apiGate
	log      *slog.Logger
	now      func() time.Time
	replicas int
	tenants  func() []*replica // the open replicas

	mu     sync.Mutex             // guards the fields below; taken after replica.mu
	held   map[string]*heldQueue  // by tenant: quarantines applied since the last tick (notify_held.go)
	retry  []Notification         // quarantines whose publish failed
	sent   map[string]int64       // DedupIDs published, with when (unix ms), pruned after NotifyDedup
	pruned int64                  // when sent was last pruned (unix ms)
	drops  map[dropKey]uint64     // notifications not queued or not published, by tenant and reason
	walks  map[string]*heldWalk   // by tenant: re-derivations of quarantine notifications under way
	stored map[string]*byteWindow // by tenant: bytes the stream keeps (notify_quota.go)
	logged map[dropKey]int64      // when a tenant's drops of a reason were last logged (unix ms)

	quota atomic.Pointer[func(tenant string) int64] // SetNotifyQuota; nil: DefaultNotifyBytes
}

// open creates (or updates) the notifications' stream.
func (n *notifier) open(ctx context.Context) error {
	return n.api.do(func() error {
		_, err := n.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:       NotifyStream,
			Subjects:   []string{NotifySubject("*")},
			Storage:    jetstream.FileStorage,
			Retention:  jetstream.LimitsPolicy,
			MaxAge:     notifyMaxAge,
			Duplicates: NotifyDedup,
			Replicas:   n.replicas,
		})
		return err
	})
}

// run opens the stream and seeds what was published (retrying while a
// cluster forms), then every notifyTick publishes what came due. It stops
// when ctx ends.
func (n *notifier) run(ctx context.Context) {
	wait := time.Second
	for {
		octx, cancel := context.WithTimeout(ctx, replicasTimeout)
		err := n.open(octx)
		if err == nil {
			err = n.seed(octx)
		}
		cancel()
		if err == nil {
			break
		}
		n.log.Warn("hub: the notifications' stream cannot be opened yet; retrying", "err", err)
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
		n.due(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// seed marks as published every notification the stream stored in the
// last NotifyDedup, read headers only (one pass, at start), so that a node
// does not publish again what it or another node published before it
// started. It is what makes the upgrade to tenant-qualified message ids
// safe: a notification stored under its bare id (the old message id, which
// the stream's deduplication does not match against a DedupID) is seeded
// under the tenant of its subject, and so is not stored a second time.
func (n *notifier) seed(ctx context.Context) error {
	st, err := n.js.Stream(ctx, NotifyStream)
	if err != nil {
		return fmt.Errorf("notifications' stream: %w", err)
	}
	state := st.CachedInfo().State
	from := time.Now().Add(-notifyMaxAge) // the stream's clock, not Config.Now: it stamps messages
	if state.Msgs == 0 || state.LastTime.Before(from) {
		return nil
	}
	c, err := n.js.OrderedConsumer(ctx, NotifyStream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &from, HeadersOnly: true})
	if err != nil {
		return fmt.Errorf("read the notifications' stream: %w", err)
	}
	now := n.now().UnixMilli()
	for {
		batch, err := c.Fetch(1000, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return fmt.Errorf("read the notifications' stream: %w", err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			if n.seedOne(m, now) >= state.LastSeq {
				return nil
			}
		}
		if err := batch.Error(); err != nil {
			return fmt.Errorf("read the notifications' stream: %w", err)
		}
		if got == 0 {
			return nil
		}
	}
}

// seedOne marks stored notification m as published where it is at most
// NotifyDedup old, and counts its bytes against its tenant's quota (every
// message the stream keeps, notifyMaxAge). It returns m's stream sequence.
func (n *notifier) seedOne(m jetstream.Msg, now int64) uint64 {
	md, err := m.Metadata()
	if err != nil {
		return 0
	}
	id := seedID(m.Subject(), m.Headers().Get(jetstream.MsgIDHeader))
	if time.Since(md.Timestamp) <= NotifyDedup {
		n.markSent(id, now)
	}
	size, _ := strconv.Atoi(m.Headers().Get("Nats-Msg-Size")) // a headers-only read gives the body's size so
	tenant, _, _ := strings.Cut(id, "/")
	n.account(tenant, storedSize(m.Subject(), id, size), md.Timestamp)
	return md.Sequence.Stream
}

// seedID returns the DedupID of a stored notification from its subject
// (rw.<tenant>.notify) and message id: a DedupID already, or a bare id
// stored before message ids carried the tenant.
func seedID(subject, msgID string) string {
	if strings.Contains(msgID, "/") {
		return msgID
	}
	tenant := strings.TrimSuffix(strings.TrimPrefix(subject, "rw."), ".notify")
	return tenant + "/" + msgID
}

// dueNote is a notification with the replica it is about (nil: a
// quarantine).
type dueNote struct {
	r    *replica
	note Notification
}

// due publishes the notifications due now that this node has not
// published yet. A tenant whose notes fail to publish is visited again at
// the next tick; a quarantine whose publish failed is queued again.
func (n *notifier) due(ctx context.Context) {
	now := n.now().UnixMilli()
	var due []dueNote
	open := n.tenants()
	for _, r := range open {
		due = n.visit(r, now, due)
	}
	for _, note := range n.takeHeld(now) {
		due = append(due, dueNote{note: note})
	}
	for _, note := range n.rederive(open, now) {
		due = append(due, dueNote{note: note})
	}
	for _, d := range due {
		// A quarantine may be both queued and derived again in one pass:
		// publish it once (a duplicate would count twice against its quota).
		if n.published(d.note.DedupID()) || n.overQuota(d.note, now) {
			continue
		}
		if err := n.publish(ctx, d.note); err != nil {
			if ctx.Err() == nil {
				n.log.Warn("hub: a notification was not published; retrying", "id", d.note.ID, "err", err)
			}
			if d.r != nil {
				d.r.noteDue = now // visit it again at the next tick
			} else {
				n.requeue(d.note)
			}
			continue
		}
		n.markSent(d.note.DedupID(), now)
	}
	n.prune(now)
	n.ticks.Add(1)
}

// visit appends r's board.ended and window.closed notifications due at now
// to due, where r may have any: its schedule moved or its next due came.
// Notifier goroutine only (it owns r.noteDue).
func (n *notifier) visit(r *replica, now int64, due []dueNote) []dueNote {
	if !r.noteMoved.Swap(false) && now < r.noteDue {
		return due
	}
	n.visits.Add(1)
	r.mu.RLock()
	notes := r.st.DueNotifications(r.tenant, now, func(id string) bool { return n.published(r.tenant + "/" + id) })
	r.noteDue = r.st.NextDue(now)
	r.mu.RUnlock()
	for _, note := range notes {
		due = append(due, dueNote{r: r, note: note})
	}
	return due
}

// publish publishes note with its DedupID as the message id.
func (n *notifier) publish(ctx context.Context, note Notification) error {
	data, err := json.Marshal(note)
	if err != nil {
		return fmt.Errorf("encode notification: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	msg := nats.NewMsg(NotifySubject(note.Tenant))
	msg.Data = data
	msg.Header.Set(jetstream.MsgIDHeader, note.DedupID())
	if _, err = n.js.PublishMsg(ctx, msg); err != nil {
		return err
	}
	// Stored now, or a duplicate of what another node stored: either way
	// the stream holds it, and every node counts it.
	n.account(note.Tenant, storedSize(msg.Subject, note.DedupID(), len(data)), time.Now())
	return nil
}

// published reports whether this node published the notification of
// DedupID id already.
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
