package hub

import (
	"context"
	"slices"
	"time"

	"github.com/rankwire/rankwire/internal/streamwatch"
)

// watchNewTenants watches the stream-created advisories of tenant
// streams: every stream created after it returns is announced. Without
// advisories (a permission error) it never wakes and discover falls back
// to polling.
func (g *registry) watchNewTenants() *streamwatch.Watch {
	w, err := streamwatch.New(g.streams.nc, streamPrefix, validName)
	if err != nil {
		g.log.Warn("hub: no stream advisories; new tenants are found by polling only", "every", g.streams.cfg.DiscoverInterval, "err", err)
	}
	return w
}

// discover opens the tenant streams that appear after start: tenants created
// through another gateway sharing the NATS cluster. It looks when JetStream
// announces a new tenant stream (w: normally within milliseconds) and, as a
// fallback for an advisory that was missed (a reconnect, a server that does
// not send them), every interval. Cost: one stream listing per look. A
// failure is logged and retried at the next look. It runs until ctx ends.
func (g *registry) discover(ctx context.Context, interval time.Duration, w *streamwatch.Watch) {
	defer w.Close()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g.lookForTenants(ctx, interval)
		case <-w.Wake:
			g.lookForAnnounced(ctx, interval, w.Take())
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
