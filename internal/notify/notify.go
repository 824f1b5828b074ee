// Package notify publishes each tenant's notifications to the
// notifications' stream: when a board ends, when a day, week or month
// window closes, when a submission is quarantined and when a board's
// standings are amended, it publishes a ledger.Notification (built by the
// ledger from the tenant's state: internal/ledger/notify.go) to the
// tenant's subject rw.<tenant>.notify, stored in the stream Stream, from
// which package webhook delivers it. The members' names it shows are
// stored sealed under their keys and opened for delivery (seal.go).
//
// Every node publishes every notification, with its DedupID (tenant and
// ID) as the JetStream message id; the stream keeps ids for Dedup, so each
// is stored once whichever nodes publish it, and two tenants'
// notifications with the same ID are both stored. A node that was down
// publishes on its return what came due meanwhile, up to Dedup old; a node
// remembers what it published, so that a due notification costs one
// publish per node.
//
// The hub owns a Notifier and its goroutine (Run); each of its replicas
// holds a Tenant, the notifier's side of one tenant: apply reports what
// it decided to it (Tenant.Applied), and the notifier reads the tenant's
// state through it. Each tenant has its own bounded queue (held.go) and
// its own byte quota in the shared stream (quota.go), so one tenant's
// flood neither grows memory nor takes another tenant's room.
//
// It may import internal/ledger, internal/jsread and the nats-io modules
// (plus the standard library): it knows nothing of the hub's replicas or
// streams but the Tenant handles the hub gives it.
//
// Its log lines start "hub:", as they did when this was part of package
// hub, so that the searches docs/OPERATIONS.md and docs/CLUSTERING.md give
// operators still find them.
//
// # Locks
//
// Notifier.mu guards the queues, the ids published, the drops and the
// bytes stored. It is taken under a tenant's read lock (the ledger asks
// what was published while it walks the state), and no other lock is
// taken while it is held; it is never held across a NATS round trip.
package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/jsread"
	"github.com/rankwire/rankwire/internal/ledger"
)

// The notifications' stream and its limits.
const (
	// Stream is the JetStream stream every tenant's notifications are
	// stored in.
	Stream = "rankwire_notify"
	// Dedup is how long ids are remembered: a notification older than
	// this is not published again (ledger.NotifyDedup).
	Dedup = ledger.NotifyDedup

	maxAge      = 72 * time.Hour // kept for delivery: webhooks retry for 24 h (Dedup: ids remembered)
	tick        = 500 * time.Millisecond
	openTimeout = 2 * time.Second // one attempt to open the stream: a cluster may still form its quorum
)

// Subject returns the subject a tenant's notifications go to.
func Subject(tenant string) string { return "rw." + tenant + ".notify" }

// Config is what a Notifier needs from its owner. JS and Tenants are
// required.
type Config struct {
	JS jetstream.JetStream
	// Gate runs each JetStream API request (the hub's API gate, which
	// keeps them out of a JetStream restart). Nil means calling it as is.
	Gate func(request func() error) error
	// Log gets the warnings. Nil means slog.Default().
	Log *slog.Logger
	// Now is the clock that decides what is due (the hub's Config.Now).
	// Nil means time.Now.
	Now func() time.Time
	// Replicas is the stream's replica count. Zero means 1.
	Replicas int
	// Tenants returns the open tenants' handles, once a tick.
	Tenants func() []*Tenant
	// Keys seals the names in notifications (seal.go): the hub's members'
	// keys. Nil stores them in clear (tests of this package only).
	Keys Sealer
}

// Notifier owns the notifications' stream and the goroutine that
// publishes to it (Run), the quarantines apply reported, and what this
// node has published. Safe for concurrent use.
//
// It visits a tenant (takes its read lock and asks the ledger what is due)
// only when something may be due: when the tenant's schedule moved (it
// opened, or an event changed a board's settings or deleted one:
// Outcome.Schedule), when the time the ledger gave as its next due
// (NextDue) has come, or when a publish of its notes failed. Every other
// tick costs an atomic load per tenant.
type Notifier struct {
	ticks  atomic.Uint64 // passes of due so far (tests wait on it)
	visits atomic.Uint64 // tenants visited so far (tests count them)
	// heldCap is a tenant's queue (held.go); zero means maxHeldPerTenant.
	heldCap atomic.Int64

	cfg Config // set by New, then only read

	mu     sync.Mutex             // guards the fields below; taken under a tenant's read lock
	held   map[string]*heldQueue  // by tenant: quarantines applied since the last tick (held.go)
	retry  []ledger.Notification  // quarantines whose publish failed
	sent   map[string]int64       // DedupIDs published, with when (unix ms), pruned after Dedup
	pruned int64                  // when sent was last pruned (unix ms)
	drops  map[dropKey]uint64     // notifications not queued or not published, by tenant and reason
	walks  map[string]*heldWalk   // by tenant: re-derivations of quarantine notifications under way
	stored map[string]*byteWindow // by tenant: bytes the stream keeps (quota.go)
	logged map[dropKey]int64      // when a tenant's drops of a reason were last logged (unix ms)

	quota atomic.Pointer[func(tenant string) int64] // SetQuota; nil: DefaultBytes
}

// New returns a Notifier over cfg; Run starts its work.
func New(cfg Config) *Notifier {
	if cfg.Gate == nil {
		cfg.Gate = func(request func() error) error { return request() }
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Replicas = max(cfg.Replicas, 1)
	return &Notifier{cfg: cfg}
}

// Passes returns how many passes over what is due the notifier has made
// (for tests, which wait for passes instead of sleeping).
func (n *Notifier) Passes() uint64 { return n.ticks.Load() }

// Visits returns how many times the notifier has read a tenant's state to
// find what is due (for tests: a tick with nothing due reads none).
func (n *Notifier) Visits() uint64 { return n.visits.Load() }

// SetQueueCap bounds each tenant's queue of quarantines to c (zero or
// less: 8192, about 2.4 MB per flooding tenant). Tests lower it.
func (n *Notifier) SetQueueCap(c int) { n.heldCap.Store(int64(c)) }

// open creates (or updates) the notifications' stream.
func (n *Notifier) open(ctx context.Context) error {
	return n.cfg.Gate(func() error {
		_, err := n.cfg.JS.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:       Stream,
			Subjects:   []string{Subject("*")},
			Storage:    jetstream.FileStorage,
			Retention:  jetstream.LimitsPolicy,
			MaxAge:     maxAge,
			Duplicates: Dedup,
			Replicas:   n.cfg.Replicas,
		})
		return err
	})
}

// Run opens the stream and seeds what was published (retrying while a
// cluster forms), then every 500 ms publishes what came due. It returns
// when ctx ends; its owner waits for it.
func (n *Notifier) Run(ctx context.Context) {
	wait := time.Second
	for {
		octx, cancel := context.WithTimeout(ctx, openTimeout)
		err := n.open(octx)
		cancel()
		if err == nil {
			err = n.seed(ctx)
		}
		if err == nil {
			break
		}
		n.cfg.Log.Warn("hub: the notifications' stream cannot be opened yet; retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
	t := time.NewTicker(tick)
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
// last Dedup, read headers only (one pass, at start), so that a node does
// not publish again what it or another node published before it started.
// It is what makes the upgrade to tenant-qualified message ids safe: a
// notification stored under its bare id (the old message id, which the
// stream's deduplication does not match against a DedupID) is seeded
// under the tenant of its subject, and so is not stored a second time.
// Its reads stop when ctx ends (the owner closes), not at openTimeout: a
// long stream takes more than one.
func (n *Notifier) seed(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, openTimeout)
	st, err := n.cfg.JS.Stream(sctx, Stream)
	cancel()
	if err != nil {
		return fmt.Errorf("notifications' stream: %w", err)
	}
	state := st.CachedInfo().State
	from := time.Now().Add(-maxAge) // the stream's clock, not Config.Now: it stamps messages
	if state.Msgs == 0 || state.LastTime.Before(from) {
		return nil
	}
	now := n.cfg.Now().UnixMilli()
	o := jsread.Options{MaxWait: time.Second, Consumer: jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &from, HeadersOnly: true}}
	err = jsread.Read(ctx, st, o, func(m jetstream.Msg, md *jetstream.MsgMetadata) (bool, error) {
		return n.seedOne(m, md, now) >= state.LastSeq, nil
	})
	if err != nil && !errors.Is(err, jsread.ErrEnded) {
		return fmt.Errorf("read the notifications' stream: %w", err)
	}
	return nil
}

// seedOne marks stored notification m as published where it is at most
// Dedup old, and counts its bytes against its tenant's quota (every
// message the stream keeps, maxAge). It returns m's stream sequence.
func (n *Notifier) seedOne(m jetstream.Msg, md *jetstream.MsgMetadata, now int64) uint64 {
	id := seedID(m.Subject(), m.Headers().Get(jetstream.MsgIDHeader))
	if time.Since(md.Timestamp) <= Dedup {
		n.markSent(id, now)
	}
	size, _ := strconv.Atoi(m.Headers().Get("Nats-Msg-Size")) // a headers-only read gives the body's size so
	tenant, _, _ := strings.Cut(id, "/")
	n.account(tenant, storedSize(m.Subject(), id, m.Headers().Get(HeaderSealed) != "", size), md.Timestamp)
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

// dueNote is a notification with the tenant it is about (nil: a
// quarantine or an amendment, from the queues).
type dueNote struct {
	t    *Tenant
	note ledger.Notification
}

// due publishes the notifications due now that this node has not
// published yet. A tenant whose notes fail to publish is visited again at
// the next tick; a quarantine whose publish failed is queued again.
func (n *Notifier) due(ctx context.Context) {
	now := n.cfg.Now().UnixMilli()
	var due []dueNote
	open := n.cfg.Tenants()
	for _, t := range open {
		due = n.visit(t, now, due)
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
				n.cfg.Log.Warn("hub: a notification was not published; retrying", "id", d.note.ID, "err", err)
			}
			if d.t != nil {
				d.t.due = now // visit it again at the next tick
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

// visit appends t's board.ended and window.closed notifications due at now
// to due, where t may have any: its schedule moved or its next due came.
// Notifier goroutine only (it owns t.due).
func (n *Notifier) visit(t *Tenant, now int64, due []dueNote) []dueNote {
	if !t.moved.Swap(false) && now < t.due {
		return due
	}
	n.visits.Add(1)
	var notes []ledger.Notification
	_ = t.read(func(st *ledger.State) error {
		notes = st.DueNotifications(t.name, now, func(id string) bool { return n.published(t.name + "/" + id) })
		t.due = st.NextDue(now)
		return nil
	})
	for _, note := range notes {
		due = append(due, dueNote{t: t, note: note})
	}
	return due
}

// publish publishes note, its names sealed (seal.go), with its DedupID as
// the message id.
func (n *Notifier) publish(ctx context.Context, note ledger.Notification) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	data, sealed, err := seal(ctx, n.cfg.Keys, note)
	if err != nil {
		return fmt.Errorf("encode notification: %w", err)
	}
	msg := nats.NewMsg(Subject(note.Tenant))
	msg.Data = data
	msg.Header.Set(jetstream.MsgIDHeader, note.DedupID())
	if sealed {
		msg.Header.Set(HeaderSealed, SealedV1)
	}
	if _, err = n.cfg.JS.PublishMsg(ctx, msg); err != nil {
		return err
	}
	// Stored now, or a duplicate of what another node stored: either way
	// the stream holds it, and every node counts it. Every node's sealed
	// body has the same length (the same names, one nonce and tag each).
	n.account(note.Tenant, storedSize(msg.Subject, note.DedupID(), sealed, len(data)), time.Now())
	return nil
}

// published reports whether this node published the notification of
// DedupID id already.
func (n *Notifier) published(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.sent[id]
	return ok
}

func (n *Notifier) markSent(id string, now int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sent == nil {
		n.sent = map[string]int64{}
	}
	n.sent[id] = now
}

// prune forgets ids published more than Dedup ago, at most once a minute:
// a walk of every id every tick would cost more than it frees.
func (n *Notifier) prune(now int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if now-n.pruned < time.Minute.Milliseconds() {
		return
	}
	n.pruned = now
	for id, at := range n.sent {
		if now-at > Dedup.Milliseconds() {
			delete(n.sent, id)
		}
	}
}
