package hub

import (
	"context"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// streamCreated is the subject of JetStream's advisory that a stream was
// created in the account; its last token is the stream's name. The account's
// JetStream publishes it on every node of a cluster, so every gateway hears
// of a tenant created through another one within a round trip.
const streamCreated = "$JS.EVENT.ADVISORY.STREAM.CREATED."

// tenantWatch reports, on wake, that JetStream announced a new tenant
// stream; stop ends the subscription.
type tenantWatch struct {
	wake <-chan struct{}
	stop func()
}

// watchNewTenants subscribes to the stream-created advisories of tenant
// streams and flushes, so that every stream created after it returns is
// announced. Without advisories (a permission error) wake never fires and
// discover falls back to polling.
func (h *Hub) watchNewTenants() tenantWatch {
	wake := make(chan struct{}, 1) // one pending look is enough: a look opens every new tenant
	// "*" matches a whole subject token only: every stream's advisory
	// arrives here, and the handler keeps the tenants'.
	sub, err := h.nc.Subscribe(streamCreated+"*", func(m *nats.Msg) {
		if t, ok := strings.CutPrefix(strings.TrimPrefix(m.Subject, streamCreated), streamPrefix); ok && validName(t) {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	})
	if err == nil {
		err = h.nc.Flush()
	}
	if err != nil {
		h.log.Warn("hub: no stream advisories; new tenants are found by polling only", "every", h.cfg.DiscoverInterval, "err", err)
		return tenantWatch{wake: wake, stop: func() {}}
	}
	return tenantWatch{wake: wake, stop: func() { _ = sub.Unsubscribe() }}
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
func (h *Hub) discover(ctx context.Context, interval time.Duration, w tenantWatch) {
	defer w.close()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-w.wake:
		}
		h.lookForTenants(ctx, interval)
	}
}

// lookForTenants opens every tenant stream not open yet, bounded by timeout.
func (h *Hub) lookForTenants(ctx context.Context, timeout time.Duration) {
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := h.openAll(lctx); err != nil && ctx.Err() == nil {
		h.log.Warn("hub: discovering tenants", "err", err)
	}
}
