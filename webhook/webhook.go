// Package webhook delivers each tenant's notifications (ledger.Notification,
// published by package internal/notify to the stream notify.Stream) to the
// tenant's webhook: an HTTP POST of the notification's JSON (the members'
// names, stored sealed, opened with Config.Keys: notify.Body), signed the
// Standard Webhooks way (webhook-id, webhook-timestamp, webhook-signature:
// see sign.go), and with the deprecated `X-Rankwire-Signature` of earlier
// releases.
//
// Only destinations the policy allows are connected to (policy.go): the
// resolved address of every connection is checked at dial time, so that a
// tenant's URL cannot reach the gateway's network (loopback, link-local
// metadata services, private ranges, the gateway itself) unless the
// operator allowed it. URLs are logged without path or query.
//
// Delivery is at least once and in order per tenant: each tenant has one
// durable JetStream consumer, shared by every gateway of the cluster, that
// lets one notification out at a time (MaxAckPending 1). The gateway that
// holds it posts it until the receiver answers 2xx, waiting 1 s, 2 s, 4 s
// ... up to 10 min between attempts, and acknowledges it then; the next
// notification is let out only after that. A gateway that dies while
// holding one leaves it unacknowledged: after AckWait (60 s) another
// gateway gets it, first. One that stops gracefully hands it back (a NAK):
// another gateway gets it at once, but JetStream forgets a NAK when its
// server restarts, and then AckWait applies too. A notification still refused 24 h after it was stored is
// dropped, logged and counted. Redirects are not followed.
package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/notify"
	"github.com/rankwire/rankwire/internal/redact"
)

// Hook is where a tenant's notifications go.
type Hook struct {
	URL    string
	Secret string // keys the signature: its bytes as written
}

// Config configures a Deliverer. JS and Hooks are required.
type Config struct {
	JS jetstream.JetStream
	// API runs each JetStream API request the Deliverer makes (creating a
	// tenant's consumer): Hub.JetStreamAPI, which keeps them out of a
	// restart of the embedded JetStream. nil: they run directly.
	API func(request func() error) error
	// Hooks returns every tenant's webhook; called every Resync, so that a
	// reloaded key file takes effect.
	Hooks func() map[string]Hook
	// Allow lists the prefixes a webhook may connect to although the
	// destination policy refuses them by default (loopback, link-local,
	// private, unspecified, multicast, reserved): --webhook-allow. The
	// gateway's own listeners (Self) are lifted only by a single address.
	Allow []netip.Prefix
	// Self holds the gateway's listen addresses (IP:port; an unspecified IP
	// stands for every local address), which no webhook may reach.
	Self    []string
	Timeout time.Duration // of one attempt; 0: 10 s
	Logger  *slog.Logger  // nil: slog.Default()
	// Poll is how long one pull waits for a notification before asking
	// again (an idle tenant's loop). 0: 2 s.
	Poll   time.Duration
	Resync time.Duration // 0: 5 s
	// Backoff returns the wait before attempt n+1 after n failed ones
	// (n ≥ 1). nil: 1 s doubling, at most 10 min.
	Backoff func(n int) time.Duration
	GiveUp  time.Duration // 0: 24 h after the notification was stored
	// AckWait is how long a held notification stays with its gateway
	// without a sign of life before another may take it (the holder
	// reports progress every AckWait/3 while it retries). 0: 60 s.
	AckWait time.Duration
	// Keys opens the members' names sealed in stored notifications
	// (notify.Body): the hub's, hub.Privacy().Keys(). Nil delivers them
	// without the names, as after an erasure.
	Keys notify.Sealer
}

// Stats are the Deliverer's counters, for metrics.
type Stats struct {
	Delivered uint64 // notifications a receiver took (2xx)
	Failed    uint64 // attempts refused or failed (any other answer, or none)
	Dropped   uint64 // notifications given up after GiveUp
	// Refused counts attempts the destination policy refused (counted in
	// Failed too), by reason (Reasons); every reason is present.
	Refused map[string]uint64
}

// Deliverer runs one delivery loop per tenant with a webhook. Start it with
// Start and stop it with Close.
type Deliverer struct {
	cfg    Config
	client *http.Client // checks every destination with the policy
	cancel context.CancelFunc
	wg     sync.WaitGroup

	delivered, failed, dropped atomic.Uint64
	refused                    [len(Reasons)]atomic.Uint64 // by index in Reasons

	mu    sync.Mutex // guards loops
	loops map[string]*loop
}

// loop is one tenant's delivery goroutine and its hook.
type loop struct {
	hook   atomic.Pointer[Hook]
	cancel context.CancelFunc
	// Touched only by the loop's goroutine: the rate limit of the log of
	// refused destinations.
	refusedLogged time.Time
	refusedSince  int
}

// Start starts delivering for every tenant Hooks names, and looks again
// every Resync.
func Start(cfg Config) *Deliverer {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.API == nil {
		cfg.API = func(request func() error) error { return request() }
	}
	if cfg.Resync <= 0 {
		cfg.Resync = 5 * time.Second
	}
	if cfg.Backoff == nil {
		cfg.Backoff = func(n int) time.Duration { return min(time.Second<<min(n-1, 20), 10*time.Minute) }
	}
	if cfg.GiveUp <= 0 {
		cfg.GiveUp = 24 * time.Hour
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = 60 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Deliverer{cfg: cfg, cancel: cancel, loops: map[string]*loop{}, client: newClient(newPolicy(cfg.Allow, cfg.Self), cfg.Timeout)}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.resync(ctx)
	}()
	return d
}

// Close stops every loop and waits for them. A notification being
// delivered stays unacknowledged: another gateway (or this one, restarted)
// delivers it.
func (d *Deliverer) Close() {
	d.cancel()
	d.wg.Wait()
}

// Stats returns the counters.
func (d *Deliverer) Stats() Stats {
	st := Stats{Delivered: d.delivered.Load(), Failed: d.failed.Load(), Dropped: d.dropped.Load(), Refused: map[string]uint64{}}
	for i, r := range Reasons {
		st.Refused[r] = d.refused[i].Load()
	}
	return st
}

// resync starts a loop for each tenant that gained a webhook, updates the
// hook of the others and stops those whose webhook went, every Resync.
func (d *Deliverer) resync(ctx context.Context) {
	t := time.NewTicker(d.cfg.Resync)
	defer t.Stop()
	for {
		hooks := d.cfg.Hooks()
		d.mu.Lock()
		for tenant, l := range d.loops {
			if _, ok := hooks[tenant]; !ok {
				l.cancel()
				delete(d.loops, tenant)
			}
		}
		for tenant, h := range hooks {
			l := d.loops[tenant]
			if l == nil {
				lctx, cancel := context.WithCancel(ctx)
				l = &loop{cancel: cancel}
				d.loops[tenant] = l
				l.hook.Store(&h)
				d.wg.Add(1)
				go func() {
					defer d.wg.Done()
					d.run(lctx, tenant, l)
				}()
				continue
			}
			l.hook.Store(&h)
		}
		d.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// consumerName is a tenant's durable consumer: one per tenant, shared by
// every gateway.
func consumerName(tenant string) string { return "rankwire_webhook_" + tenant }

// run delivers tenant's notifications one at a time until ctx ends.
func (d *Deliverer) run(ctx context.Context, tenant string, l *loop) {
	log := d.cfg.Logger.With("tenant", tenant)
	var cons jetstream.Consumer
	for wait := time.Second; cons == nil; wait = min(2*wait, 30*time.Second) {
		var c jetstream.Consumer
		err := d.cfg.API(func() error {
			var err error
			c, err = d.cfg.JS.CreateOrUpdateConsumer(ctx, notify.Stream, jetstream.ConsumerConfig{
				Durable:       consumerName(tenant),
				FilterSubject: notify.Subject(tenant),
				AckPolicy:     jetstream.AckExplicitPolicy,
				AckWait:       d.cfg.AckWait,
				MaxAckPending: 1,
				DeliverPolicy: jetstream.DeliverNewPolicy, // on creation only: a durable resumes where it was
			})
			return err
		})
		if err == nil {
			cons = c
			break
		}
		if ctx.Err() != nil {
			return
		}
		log.Warn("webhook: the tenant's consumer cannot be made yet; retrying", "err", err, "in", wait)
		if !sleep(ctx, wait) {
			return
		}
	}
	for ctx.Err() == nil {
		msg, err := cons.Next(jetstream.FetchMaxWait(d.cfg.Poll))
		if err != nil {
			if !idle(err) && ctx.Err() == nil {
				log.Warn("webhook: fetch failed; retrying", "err", err)
				sleep(ctx, time.Second)
			}
			continue
		}
		d.deliver(ctx, log, tenant, l, msg)
	}
}

// idle reports whether err from a pull only says that no notification
// came within the wait: Next answers nats.ErrTimeout then, which is not
// jetstream.ErrNoMessages, and a tenant with nothing to deliver would
// otherwise log a warning at every poll.
func idle(err error) bool {
	return errors.Is(err, nats.ErrTimeout) || errors.Is(err, jetstream.ErrNoMessages) || errors.Is(err, context.DeadlineExceeded)
}

// notificationID returns the notification's id (the webhook-id) from its
// message id: the hub's DedupID "<tenant>/<id>", or the bare id a gateway
// stored before message ids carried the tenant (neither a tenant name nor
// a notification id has a slash). A copy republished by an erasure
// (internal/shred.Scrub) has "#" and more after it: the same webhook-id,
// so that receivers deduplicate it (no notification id has a "#").
func notificationID(msgID string) string {
	msgID, _, _ = strings.Cut(msgID, "#")
	if _, id, ok := strings.Cut(msgID, "/"); ok {
		return id
	}
	return msgID
}

// deliver posts msg, its names opened, until it is taken, given up or ctx
// ends: then it is handed back (a NAK), so that another gateway, or this
// one restarted, delivers it at once instead of after AckWait.
func (d *Deliverer) deliver(ctx context.Context, log *slog.Logger, tenant string, l *loop, msg jetstream.Msg) {
	id := notificationID(msg.Headers().Get(jetstream.MsgIDHeader))
	meta, err := msg.Metadata()
	if err != nil {
		log.Error("webhook: a message without metadata; dropped", "err", err)
		_ = msg.Term()
		return
	}
	body, ok := d.open(ctx, log, tenant, id, msg)
	if !ok {
		return
	}
	for attempt := 1; ; attempt++ {
		hook := l.hook.Load()
		err := d.post(ctx, hook, id, attempt, body)
		if err == nil {
			if err := msg.DoubleAck(ctx); err != nil && ctx.Err() == nil {
				log.Warn("webhook: delivered, but the ack was lost: it may be delivered again", "id", id, "err", err)
			}
			d.delivered.Add(1)
			return
		}
		if ctx.Err() != nil {
			_ = msg.Nak()
			return
		}
		d.failed.Add(1)
		if time.Since(meta.Timestamp) > d.cfg.GiveUp {
			d.dropped.Add(1)
			log.Error("webhook: a notification was refused for too long; dropped", "id", id, "url", Redact(hook.URL), "attempts", attempt, "err", err)
			_ = msg.Term()
			return
		}
		wait := d.cfg.Backoff(attempt)
		d.logFailure(log, l, hook, id, attempt, wait, err)
		if !d.hold(ctx, msg, wait) {
			_ = msg.Nak()
			return
		}
	}
}

// open returns the body of stored notification msg as receivers get it
// (notify.Body: the names opened, or left out where erased). Where the
// keys cannot be read it tries again, with backoff, holding msg, rather
// than deliver a body without names that the notification never had; a
// body that cannot be decoded is logged and dropped. False where it gave
// msg back or dropped it.
func (d *Deliverer) open(ctx context.Context, log *slog.Logger, tenant, id string, msg jetstream.Msg) ([]byte, bool) {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 10*time.Second) {
		body, err := notify.Body(ctx, d.cfg.Keys, tenant, msg.Headers(), msg.Data())
		var opening *notify.OpenError
		switch {
		case err == nil:
			return body, true
		case ctx.Err() != nil:
			_ = msg.Nak()
			return nil, false
		case !errors.As(err, &opening):
			log.Error("webhook: a stored notification cannot be read; dropped", "id", id, "err", err)
			_ = msg.Term()
			return nil, false
		}
		log.Warn("webhook: the members' keys cannot be read now; retrying", "id", id, "in", wait, "err", err)
		if !d.hold(ctx, msg, wait) {
			_ = msg.Nak()
			return nil, false
		}
	}
}

// logFailure logs a failed attempt, the URL without path or query. A
// destination the policy refused is counted by reason and logged at most
// once a minute per tenant: it stays refused until the key file or
// --webhook-allow changes.
func (d *Deliverer) logFailure(log *slog.Logger, l *loop, hook *Hook, id string, attempt int, wait time.Duration, err error) {
	var refused *RefusedError
	if !errors.As(err, &refused) {
		log.Warn("webhook: delivery failed; retrying", "id", id, "url", Redact(hook.URL), "attempt", attempt, "in", wait, "err", err)
		return
	}
	for i, r := range Reasons {
		if r == refused.Reason {
			d.refused[i].Add(1)
		}
	}
	l.refusedSince++
	if time.Since(l.refusedLogged) < time.Minute {
		return
	}
	log.Warn("webhook: destination refused by policy; retrying", "id", id, "url", Redact(hook.URL), "addr", refused.Addr.String(),
		"reason", refused.Reason, "refused_since_last_log", l.refusedSince, "attempt", attempt, "in", wait)
	l.refusedLogged, l.refusedSince = time.Now(), 0
}

// hold waits for wait, telling JetStream every ackWait/3 that msg is still
// being worked on; false where ctx ended.
func (d *Deliverer) hold(ctx context.Context, msg jetstream.Msg, wait time.Duration) bool {
	for wait > 0 {
		step := min(wait, d.cfg.AckWait/3)
		if !sleep(ctx, step) {
			return false
		}
		wait -= step
		_ = msg.InProgress()
	}
	return true
}

// post sends one attempt; nil where the receiver answered 2xx.
func (d *Deliverer) post(ctx context.Context, hook *Hook, id string, attempt int, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hook.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "rankwire-webhook")
	req.Header.Set("X-Rankwire-Id", id)
	req.Header.Set("X-Rankwire-Attempt", fmt.Sprint(attempt))
	if err := signRequest(req.Header, hook.Secret, id, time.Now(), body); err != nil {
		return err
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return redact.Err(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("answered %s", resp.Status)
	}
	return nil
}

// sleep waits d or until ctx ends; false where ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
