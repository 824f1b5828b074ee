package webhook

import (
	"context"
	"fmt"
	"strings"

	"github.com/rankwire/rankwire/internal/notify"
)

// Backlog returns, for each tenant whose consumer exists, the notifications
// its webhook has not yet taken: those not yet let out (NumPending) and the
// one being delivered (NumAckPending). The consumers are shared by the
// cluster, so every gateway reports the same backlog. Two JetStream API
// requests (the stream, its consumers: one paged listing), bounded by ctx.
func (d *Deliverer) Backlog(ctx context.Context) (map[string]uint64, error) {
	out := map[string]uint64{}
	err := d.cfg.API(func() error {
		s, err := d.cfg.JS.Stream(ctx, notify.Stream)
		if err != nil {
			return fmt.Errorf("notification stream: %w", err)
		}
		l := s.ListConsumers(ctx)
		for info := range l.Info() {
			if tenant, ok := strings.CutPrefix(info.Name, consumerName("")); ok {
				out[tenant] = info.NumPending + uint64(info.NumAckPending)
			}
		}
		if err := l.Err(); err != nil {
			return fmt.Errorf("webhook consumers: %w", err)
		}
		return nil
	})
	return out, err
}
