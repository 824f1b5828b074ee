package hub

import (
	"context"
	"time"
)

// discover opens, every interval until ctx ends, the tenant streams that
// appeared since the last look: tenants created through another gateway
// sharing the NATS cluster. Cost: one stream listing per interval. A
// failure is logged and retried at the next tick.
func (h *Hub) discover(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		lctx, cancel := context.WithTimeout(ctx, interval)
		if err := h.openAll(lctx); err != nil && ctx.Err() == nil {
			h.log.Warn("hub: discovering tenants", "err", err)
		}
		cancel()
	}
}
