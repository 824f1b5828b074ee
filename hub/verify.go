package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/ledger"
)

// The audit replay. Verify rebuilds every tenant's state from its stream
// alone, event by event from the first, with the same apply every node
// runs, and compares it with the tenant's snapshots (the node's file and
// the cluster's shared one) at their sequence: equal bytes prove that
// those standings follow from the submissions. It also reports a digest
// of the state rebuilt to the stream's end, which any other replay of the
// same stream, on any machine, must reproduce. It reads and never writes.

// SnapshotAudit is one snapshot compared with the replay at its sequence.
type SnapshotAudit struct {
	Source string // "file <path>" or "shared bucket"
	Seq    uint64
	Equal  bool
	Diffs  []string // what differs, where not Equal (at most maxDiffs lines)
}

// TenantAudit is one tenant's replay.
type TenantAudit struct {
	Tenant    string
	Events    uint64 // events replayed
	LastSeq   uint64 // the stream's last sequence when the replay started
	Boards    int
	Members   int    // member ids of the tenant
	Digest    string // "sha256:" hex of the rebuilt state's snapshot encoding at LastSeq
	Snapshots []SnapshotAudit
	Err       error // the replay could not finish
}

// OK reports whether the replay finished and every snapshot matched.
func (a TenantAudit) OK() bool {
	if a.Err != nil {
		return false
	}
	for _, s := range a.Snapshots {
		if !s.Equal {
			return false
		}
	}
	return true
}

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
	h.snaps = &snapshotter{dir: snapshotDir(cfg.DataDir), log: h.log}
	if err := h.connect(ctx); err != nil {
		return nil, err
	}
	if store, err := h.js.ObjectStore(ctx, sharedBucket); err == nil {
		h.snaps.shared.Store(&sharedSnapshots{store: store, log: h.log})
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
	a := TenantAudit{Tenant: tenant}
	snaps := sl.auditSnapshots(ctx, tenant, &a)
	stream, err := sl.js.Stream(ctx, streamName(tenant))
	if err != nil {
		a.Err = fmt.Errorf("stream %s: %w", streamName(tenant), err)
		return a
	}
	a.LastSeq = stream.CachedInfo().State.LastSeq
	st := ledger.New()
	compare := func() {
		for i := range snaps {
			if snaps[i].st != nil && snaps[i].audit.Seq == st.Seq() {
				snaps[i].audit.Diffs = ledger.Diff(st, snaps[i].st)
				snaps[i].audit.Equal = len(snaps[i].audit.Diffs) == 0
				snaps[i].st = nil // compared
			}
		}
	}
	compare() // a snapshot of an empty stream
	if a.LastSeq > 0 {
		a.Err = sl.replayTo(ctx, stream, a.LastSeq, func(seq uint64, ev *ledger.Event) {
			st.Apply(seq, ev)
			a.Events++
			compare()
		})
	}
	for _, s := range snaps {
		if s.st != nil && a.Err == nil {
			s.audit.Diffs = []string{fmt.Sprintf("the snapshot is at seq %d, past the stream's end (%d): not from this stream", s.audit.Seq, a.LastSeq)}
		}
		a.Snapshots = append(a.Snapshots, s.audit)
	}
	if a.Err != nil {
		return a
	}
	data, err := st.Encode()
	if err != nil {
		a.Err = fmt.Errorf("encode: %w", err)
		return a
	}
	sum := sha256.Sum256(data)
	a.Digest = "sha256:" + hex.EncodeToString(sum[:])
	a.Boards, a.Members = st.NumBoards(), st.Members()
	return a
}

// auditSnapshot is a snapshot to compare, decoded (nil once compared).
type auditSnapshot struct {
	audit SnapshotAudit
	st    *ledger.State
}

// auditSnapshots loads tenant's snapshot file and shared snapshot where
// they exist; one that does not decode is reported as a difference.
func (sl *streamLog) auditSnapshots(ctx context.Context, tenant string, a *TenantAudit) []*auditSnapshot {
	var out []*auditSnapshot
	add := func(source string, data []byte) {
		s := &auditSnapshot{audit: SnapshotAudit{Source: source}}
		st, err := ledger.Decode(data)
		if err != nil {
			s.audit.Diffs = []string{"does not decode: " + err.Error()}
		} else {
			s.st, s.audit.Seq = st, st.Seq()
		}
		out = append(out, s)
	}
	path := sl.snaps.path(tenant)
	if data, err := os.ReadFile(path); err == nil {
		add("file "+path, data)
	}
	if shared := sl.snaps.shared.Load(); shared != nil {
		sctx, cancel := context.WithTimeout(ctx, sharedTimeout)
		defer cancel()
		if data, err := shared.store.GetBytes(sctx, tenant); err == nil {
			add("shared bucket "+sharedBucket, data)
		} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
			a.Err = fmt.Errorf("shared snapshot: %w", err)
		}
	}
	return out
}

// replayTo feeds every event of stream up to last, in order, to f. An
// event that does not decode is skipped, as every replica skips it.
func (sl *streamLog) replayTo(ctx context.Context, stream jetstream.Stream, last uint64, f func(uint64, *ledger.Event)) error {
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	for {
		batch, err := cons.Fetch(1000, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			md, err := msg.Metadata()
			if err != nil {
				return fmt.Errorf("message without metadata: %w", err)
			}
			seq := md.Sequence.Stream
			if ev, err := ledger.DecodeEvent(msg.Data()); err == nil {
				f(seq, ev)
			}
			if seq >= last {
				return nil
			}
		}
		if err := batch.Error(); err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("the stream ended before seq %d", last)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
