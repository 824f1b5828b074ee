package hub

import (
	"context"
	"time"
)

// Isolation. A tenant whose stream is listed but cannot be opened (its
// stream has no leader, its host is down, NATS refuses it) must not take
// the others with it. openAll opens each tenant on its own, each NATS call
// bounded by callTimeout; one that fails is noted down here and left
// behind, and Start goes on. While a tenant is down its requests answer
// ErrUnavailable at once (no NATS round trip: many clients retrying must
// not queue on openMu), and reopenDown tries it again in the background
// with backoff from reopenFirst to reopenMax, one log line per attempt.

const (
	callTimeout = time.Second      // each NATS call of opening a tenant
	reopenFirst = time.Second      // first wait before retrying a tenant that failed to open
	reopenMax   = 30 * time.Second // longest wait between two attempts
	reopenTick  = 250 * time.Millisecond
)

// downTenant is a tenant that failed to open: the error its requests
// answer and when to try again.
type downTenant struct {
	err  error
	next time.Time
	wait time.Duration
}

// downErr returns the error of tenant while it is down, else nil. O(1),
// read lock only.
func (g *registry) downErr(tenant string) error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if d, ok := g.down[tenant]; ok {
		return d.err
	}
	return nil
}

// missing returns the error a request about tenant, which has no open
// replica, answers: the tenant's own error while it is down, else notFound.
func (g *registry) missing(tenant string, notFound error) error {
	if err := g.downErr(tenant); err != nil {
		return err
	}
	return notFound
}

// tryOpen opens tenant (whose stream exists) unless it is open, and
// records the outcome: a failure marks it down with the next attempt's
// time, a success clears it. ctx bounds the replay.
func (g *registry) tryOpen(ctx context.Context, tenant string) error {
	if g.lookup(tenant) != nil {
		return nil
	}
	_, err := g.openOnce(ctx, tenant, false)
	if g.lookup(tenant) != nil { // open, perhaps still catching up
		g.setUp(tenant)
		return nil
	}
	if err != nil && ctx.Err() == nil && g.ctx.Err() == nil {
		g.setDown(tenant, err)
	}
	return err
}

// setDown marks tenant down, doubling its wait, and logs the attempt.
func (g *registry) setDown(tenant string, err error) {
	g.mu.Lock()
	d, ok := g.down[tenant]
	if !ok {
		d = &downTenant{wait: reopenFirst / 2}
		g.down[tenant] = d
	}
	d.err = unavailable(logUnavailable, err)
	d.wait = min(2*d.wait, reopenMax)
	d.next = time.Now().Add(d.wait)
	wait := d.wait
	g.mu.Unlock()
	g.log.Warn("hub: tenant unavailable: serving the others, retrying it in the background",
		"tenant", tenant, "retry_in", wait, "err", err)
}

// setUp clears tenant's down mark, with a log line when it had one.
func (g *registry) setUp(tenant string) {
	g.mu.Lock()
	_, was := g.down[tenant]
	delete(g.down, tenant)
	g.mu.Unlock()
	if was {
		g.log.Info("hub: tenant available again", "tenant", tenant)
	}
}

// reopenDown retries the down tenants whose wait is over until ctx ends.
// Cost: a map scan every reopenTick; NATS calls only for tenants due.
func (g *registry) reopenDown(ctx context.Context) {
	t := time.NewTicker(reopenTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, tenant := range g.dueTenants(time.Now()) {
			_ = g.tryOpen(ctx, tenant)
		}
	}
}

// dueTenants returns the down tenants whose next attempt is due at now.
func (g *registry) dueTenants(now time.Time) []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var due []string
	for tenant, d := range g.down {
		if !now.Before(d.next) {
			due = append(due, tenant)
		}
	}
	return due
}

// DownTenants returns how many tenants are listed but could not be opened.
// Safe for concurrent use.
func (h *Hub) DownTenants() int {
	h.reg.mu.RLock()
	defer h.reg.mu.RUnlock()
	return len(h.reg.down)
}
