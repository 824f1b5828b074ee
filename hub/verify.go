package hub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/jsread"
	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/snapbucket"
	"github.com/rankwire/rankwire/internal/snapfile"
)

// The audit replay. Verify rebuilds every tenant's state from its stream
// alone, event by event from the first, with the same apply every node
// runs, and compares it with the tenant's snapshots (the node's file and
// the cluster's shared one) at their sequence: equal bytes prove that
// those standings follow from the submissions. It also reports a digest
// of the state rebuilt to the stream's end, which any other replay of the
// same stream, on any machine, must reproduce. It reads and never writes.

// SnapshotAudit is one snapshot compared with the replay at its sequence.
type SnapshotAudit = ledger.SnapshotAudit

// TenantAudit is one tenant's replay.
type TenantAudit = ledger.TenantAudit

// Verify connects as Start does (the embedded server on cfg.DataDir, or
// cfg.NATSURL), replays the streams of tenants (every tenant where empty)
// and returns one audit per tenant. The gateway must not be running on
// the same data directory. Errors: only where NATS cannot be reached or
// the streams listed; a tenant whose replay fails carries its own Err.
// Cost: the whole of every stream, decoded and applied once.
func Verify(ctx context.Context, cfg Config, tenants []string) ([]TenantAudit, error) {
	cfg = cfg.withDefaults()
	cfg.replicasGiven = false // an audit never changes a stream
	if cfg.NATSURL == "" {
		cfg.Cluster = Cluster{} // the node's own store, alone: the gateway is stopped
	}
	h := &Hub{cfg: cfg, log: cfg.Logger}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.reg = newRegistry(h.ctx, h.log, h.open)
	defer h.Close()
	h.snaps = &snapshotter{files: snapfile.In(cfg.DataDir), log: h.log}
	if err := h.connect(ctx); err != nil {
		return nil, err
	}
	if shared, err := snapbucket.Existing(ctx, h.js, h.log); err == nil {
		h.snaps.shared.Store(shared)
	}
	if len(tenants) == 0 {
		var err error
		if tenants, err = h.streams.listTenants(ctx); err != nil {
			return nil, err
		}
		slices.Sort(tenants)
	}
	var out []TenantAudit
	for _, t := range tenants {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		out = append(out, h.streams.verifyTenant(ctx, t))
	}
	return out, nil
}

// verifyTenant replays tenant's stream, comparing on the way.
func (sl *streamLog) verifyTenant(ctx context.Context, tenant string) TenantAudit {
	audit := ledger.NewAudit(sl.keys.Ring(tenant))
	sharedErr := sl.auditSnapshots(ctx, tenant, audit)
	stream, err := sl.js.Stream(ctx, streamName(tenant))
	if err != nil {
		return TenantAudit{Tenant: tenant, Err: fmt.Errorf("stream %s: %w", streamName(tenant), err)}
	}
	last := stream.CachedInfo().State.LastSeq
	if last > 0 {
		err = sl.replayTo(ctx, stream, last, func(seq uint64, ev *ledger.Event) {
			_ = sl.keys.Unseal(ctx, tenant, ev) // fails only as ctx ends, which replayTo reports
			audit.Apply(seq, ev)
		})
	}
	a := audit.Result(tenant, last)
	a.Err = cmp.Or(err, sharedErr, a.Err)
	return a
}

// auditSnapshots adds tenant's snapshot file and shared snapshot, where
// they exist, to audit; an error where the shared one cannot be read.
func (sl *streamLog) auditSnapshots(ctx context.Context, tenant string, audit *ledger.Audit) error {
	path := sl.snaps.files.Path(tenant)
	if data, err := os.ReadFile(path); err == nil {
		audit.AddSnapshot("file "+path, data)
	}
	shared := sl.snaps.shared.Load()
	if shared == nil {
		return nil
	}
	data, ok, err := shared.Get(ctx, tenant)
	if err != nil {
		return fmt.Errorf("shared snapshot: %w", err)
	}
	if ok {
		audit.AddSnapshot("shared bucket "+snapbucket.Name, data)
	}
	return nil
}

// replayTo feeds every event of stream up to last, in order, to f. An
// event that does not decode is skipped, as every replica skips it.
func (sl *streamLog) replayTo(ctx context.Context, stream jetstream.Stream, last uint64, f func(uint64, *ledger.Event)) error {
	return sl.replayRange(ctx, stream, 0, last, f)
}

// replayRange is replayTo from the event after after.
func (sl *streamLog) replayRange(ctx context.Context, stream jetstream.Stream, after, last uint64, f func(uint64, *ledger.Event)) error {
	tenant := strings.TrimPrefix(stream.CachedInfo().Config.Name, streamPrefix)
	var opts jsread.Options
	if after > 0 {
		opts.Consumer = jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: after + 1}
	}
	err := jsread.Read(ctx, stream, opts, func(m jetstream.Msg, md *jetstream.MsgMetadata) (bool, error) {
		if ev, err := ledger.DecodeEvent(m.Data()); err == nil {
			if err := sl.keys.Unseal(ctx, tenant, ev); err != nil { // sealed personal data: members.go
				return true, err
			}
			f(md.Sequence.Stream, ev)
		}
		return md.Sequence.Stream >= last, nil
	})
	if errors.Is(err, jsread.ErrEnded) {
		return fmt.Errorf("the stream ended before seq %d", last)
	}
	return err
}
