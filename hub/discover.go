package hub

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// streamCreated is the subject of JetStream's advisory that a stream was
// created in the account; its last token is the stream's name. The account's
// JetStream publishes it on every node of a cluster, so every gateway hears
// of a tenant created through another one within a round trip.
const streamCreated = "$JS.EVENT.ADVISORY.STREAM.CREATED."

// tenantWatch reports, on wake, that JetStream announced new tenant
// streams, and which (announced); stop ends the subscription.
type tenantWatch struct {
	wake      <-chan struct{}
	announced *announced
	stop      func()
}

// maxAnnounced bounds the tenants announced and not yet looked for: past
// it an announcement only wakes the look (which still opens every new
// stream it lists); the poll catches the rest.
const maxAnnounced = 1024

// announced is the set of tenants announced since the last look. Safe for
// concurrent use: the subscription adds, discover takes.
type announced struct {
	mu      sync.Mutex
	tenants map[string]struct{}
}

func (a *announced) add(tenant string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.tenants) < maxAnnounced {
		a.tenants[tenant] = struct{}{}
	}
}

// take returns the tenants announced since the last take, and forgets them.
func (a *announced) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.tenants))
	for t := range a.tenants {
		out = append(out, t)
	}
	clear(a.tenants)
	return out
}

// watchNewTenants subscribes to the stream-created advisories of tenant
// streams and flushes, so that every stream created after it returns is
// announced. Without advisories (a permission error) wake never fires and
// discover falls back to polling.
func (g *registry) watchNewTenants() tenantWatch {
	wake := make(chan struct{}, 1) // one pending look is enough: a look opens every new tenant
	seen := &announced{tenants: make(map[string]struct{})}
	// "*" matches a whole subject token only: every stream's advisory
	// arrives here, and the handler keeps the tenants'.
	sub, err := g.streams.nc.Subscribe(streamCreated+"*", func(m *nats.Msg) {
		if t, ok := strings.CutPrefix(strings.TrimPrefix(m.Subject, streamCreated), streamPrefix); ok && validName(t) {
			seen.add(t)
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	})
	if err == nil {
		err = g.streams.nc.Flush()
	}
	if err != nil {
		g.log.Warn("hub: no stream advisories; new tenants are found by polling only", "every", g.streams.cfg.DiscoverInterval, "err", err)
		return tenantWatch{wake: wake, announced: seen, stop: func() {}}
	}
	return tenantWatch{wake: wake, announced: seen, stop: func() { _ = sub.Unsubscribe() }}
}

// close ends the watch; the zero tenantWatch has nothing to end.
func (w tenantWatch) close() {
	if w.stop != nil {
		w.stop()
	}
}

// discover opens the tenant streams that appear after start: tenants created
// through another gateway sharing the NATS cluster. It looks when JetStream
// announces a new tenant stream (w: normally within milliseconds) and, as a
// fallback for an advisory that was missed (a reconnect, a server that does
// not send them), every interval. Cost: one stream listing per look. A
// failure is logged and retried at the next look. It runs until ctx ends.
func (g *registry) discover(ctx context.Context, interval time.Duration, w tenantWatch) {
	defer w.close()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g.lookForTenants(ctx, interval)
		case <-w.wake:
			g.lookForAnnounced(ctx, interval, w.announced.take())
		}
	}
}

// Announced tenants not listed yet are looked for again after
// announcedRetry, doubling, until announcedGiveUp has passed; then the
// poll is left to find them.
const (
	announcedRetry  = 10 * time.Millisecond
	announcedGiveUp = 2 * time.Second
)

// lookForAnnounced looks for tenants until every announced one is open
// (or down, which reopenDown retries), looking again with backoff while
// one is missing: nats-server sends a stream's creation advisory before
// the stream is listed in its account, so the first look can come too
// early (TestNewTenantSeenFromTheAnnouncement failed 4 runs in 290 before).
func (g *registry) lookForAnnounced(ctx context.Context, interval time.Duration, tenants []string) {
	start := time.Now()
	for wait := announcedRetry; ; wait *= 2 {
		g.lookForTenants(ctx, interval)
		tenants = slices.DeleteFunc(tenants, func(t string) bool { return g.lookup(t) != nil || g.downErr(t) != nil })
		if len(tenants) == 0 || time.Since(start) > announcedGiveUp {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// lookForTenants opens every tenant stream not open yet, bounded by timeout.
func (g *registry) lookForTenants(ctx context.Context, timeout time.Duration) {
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := g.openAll(lctx); err != nil && ctx.Err() == nil {
		g.log.Warn("hub: discovering tenants", "err", err)
	}
}
