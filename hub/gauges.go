package hub

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/ledger"
)

// This file is what the metrics read ahead of trouble: how full the store
// is, and per tenant how many items wait in quarantine and how long ago its
// state was last written as a snapshot.

// StoreUse is the bytes JetStream stores against its limit.
type StoreUse struct {
	Used  uint64 // bytes stored: every stream of the account (external) or the server (embedded)
	Limit uint64 // the max store the writes are refused at; 0: no limit known
}

// StoreUse returns the store's use and limit, measured as Writable measures
// them: on the embedded server its JetStream usage against its MaxStore
// (--max-store), counters only; on an external one the account's usage and
// limit, one request bounded by ctx.
func (q Quotas) StoreUse(ctx context.Context) (StoreUse, error) {
	h := q.h
	if h.srv != nil {
		info, err := h.srv.Jsz(&server.JSzOptions{})
		if err != nil {
			return StoreUse{}, fmt.Errorf("JetStream usage: %w", err)
		}
		return StoreUse{Used: info.Store, Limit: uint64(max(info.Config.MaxStore, 0))}, nil
	}
	info, err := gated(&h.api, func() (*jetstream.AccountInfo, error) { return h.js.AccountInfo(ctx) })
	if err != nil {
		return StoreUse{}, fmt.Errorf("JetStream account info: %w", err)
	}
	return StoreUse{Used: info.Store, Limit: uint64(max(info.Limits.MaxStore, 0))}, nil
}

// TenantGauges is one open tenant's state the metrics warn from.
type TenantGauges struct {
	Tenant      string
	Held        int           // items held in quarantine on all its boards, awaiting approve or reject
	SnapshotAge time.Duration // since its last snapshot was written (or the replica started)
}

// Gauges returns every open tenant's TenantGauges, in no order. Cost: a
// read lock per tenant, O(boards).
func (q Quotas) Gauges() []TenantGauges {
	now := time.Now()
	rs := q.h.reg.openReplicas()
	out := make([]TenantGauges, 0, len(rs))
	for _, r := range rs {
		g := TenantGauges{Tenant: r.tenant, SnapshotAge: now.Sub(time.Unix(0, r.savedAt.Load()))}
		_ = r.read(func(st *ledger.State) error {
			g.Held, _ = st.HeldNow() // O(boards); Usage would walk every alias set too
			return nil
		})
		out = append(out, g)
	}
	return out
}
