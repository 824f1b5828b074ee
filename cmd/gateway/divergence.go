package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/fingerprint"
)

// fingerprintSubject carries every node's checkpoint reports
// (fingerprint.Report) on the cluster's own NATS. Tenant subjects are
// rw.<tenant>.*, so no tenant name reaches it.
const fingerprintSubject = "rwfp.reports"

// divergence compares this node's tenant checkpoints with the other nodes'
// (internal/fingerprint) and tells the hub when this node's copy of a
// tenant diverged from the majority's. One goroutine, owned by start's
// caller through the returned stop, does the publishing, the tally and
// the judging; the replica goroutines only enqueue, never block.
type divergence struct {
	node     string
	members  int
	log      *slog.Logger
	fps      *hub.Fingerprints
	own      chan fingerprint.Report // from the replicas; a full queue drops (the checkpoint stays undecided)
	detected atomic.Uint64           // divergences found since start: a metric

	// Owned by the goroutine.
	now     func() time.Time // time.Now; a test's clock
	tenants map[string]*tenantTally
	pending map[string]uint64 // divergences found while the tenant was not open here (yet): handed over again every retryPending
}

// tenantTally is what divergence keeps of one tenant: its tally, the
// checkpoint it last diverged at (no verdict at or before it counts
// again) and when its last report came (sweep drops it after tallyIdle).
type tenantTally struct {
	tally   *fingerprint.Tally
	settled uint64
	last    time.Time
}

// A tenant none of whose nodes reported for tallyIdle is dropped, checked
// every tallySweep: a deleted tenant, or one whose last checkpoints name a
// node that left, would otherwise stay for ever. The nodes report a
// checkpoint within seconds of each other; a node more than an hour behind
// the others' report leaves that checkpoint undecided, as a node more than
// 16 checkpoints behind does (fingerprint.Tally). A tenant that reports
// again starts a new tally.
const (
	tallyIdle  = time.Hour
	tallySweep = 5 * time.Minute
)

// retryPending is how often a divergence the hub could not take yet is
// handed over again. A replica publishes checkpoints while it catches up
// at its opening, before the hub's registry holds it, so a verdict can
// come before the tenant is open; the next checkpoint may be far off (an
// idle tenant: never), so it is not left to judge again.
const retryPending = 200 * time.Millisecond

// newDivergence returns the comparison for a clustered node, or nil
// without --cluster (a single node has no one to compare with).
func newDivergence(cfg Config, log *slog.Logger) *divergence {
	if cfg.Cluster == "" {
		return nil
	}
	d := &divergence{node: cfg.Node, members: clusterMembers(cfg.Routes), log: log,
		own: make(chan fingerprint.Report, 1024), now: time.Now, tenants: map[string]*tenantTally{}, pending: map[string]uint64{}}
	d.fps = &hub.Fingerprints{Every: cfg.FingerprintEvery, Publish: d.enqueue}
	return d
}

// clusterMembers counts the distinct listeners --routes names (it lists
// every node's, its own included; one left out makes the majority
// smaller, never a wrong verdict with three nodes).
func clusterMembers(routes []string) int {
	seen := map[string]bool{}
	for _, r := range routes {
		if u, err := url.Parse(r); err == nil {
			seen[u.Host] = true
		}
	}
	return max(len(seen), 1)
}

// enqueue hands one of this node's checkpoints to the goroutine without
// blocking the replica.
func (d *divergence) enqueue(tenant string, c fingerprint.Checkpoint) {
	select {
	case d.own <- fingerprint.Report{Node: d.node, Tenant: tenant, Checkpoint: c}:
	default:
		d.log.Warn("fingerprint: checkpoint queue full: this checkpoint goes unchecked", "tenant", tenant, "seq", c.Seq)
	}
}

// start subscribes to the other nodes' reports and runs the goroutine
// until stop, which waits for it.
func (d *divergence) start(nc *nats.Conn) (stop func(), err error) {
	remote := make(chan *nats.Msg, 1024)
	sub, err := nc.ChanSubscribe(fingerprintSubject, remote)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { d.run(ctx, nc, remote) })
	return func() {
		_ = sub.Unsubscribe()
		cancel()
		wg.Wait()
	}, nil
}

// run publishes and records this node's reports and records the others'
// until ctx ends.
func (d *divergence) run(ctx context.Context, nc *nats.Conn, remote <-chan *nats.Msg) {
	sweep := time.NewTicker(tallySweep)
	defer sweep.Stop()
	retry := time.NewTicker(retryPending)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sweep.C:
			d.sweep()
		case <-retry.C:
			d.handOver()
		case r := <-d.own:
			if err := nc.Publish(fingerprintSubject, r.Marshal()); err != nil {
				d.log.Warn("fingerprint: report not published", "tenant", r.Tenant, "seq", r.Seq, "err", err)
			}
			d.record(r)
		case m := <-remote:
			r, err := fingerprint.ParseReport(m.Data)
			if err != nil {
				d.log.Warn("fingerprint: report ignored", "err", err)
				continue
			}
			if r.Node != d.node { // its own came through d.own
				d.record(r)
			}
		}
	}
}

// record adds r to its tenant's tally and judges this node there.
func (d *divergence) record(r fingerprint.Report) {
	t := d.tenants[r.Tenant]
	if t == nil {
		t = &tenantTally{tally: fingerprint.NewTally(d.members)}
		d.tenants[r.Tenant] = t
	}
	t.last = d.now()
	if !t.tally.Record(r.Node, r.Checkpoint) || r.Seq <= t.settled {
		return
	}
	v, majority := t.tally.Judge(d.node, r.Seq)
	if v == fingerprint.Agrees { // its snapshot there may be shared (hub.Fingerprints.Agreed)
		d.fps.Agreed(r.Tenant, fingerprint.Checkpoint{Seq: r.Seq, Sum: majority})
	}
	if v != fingerprint.Diverged {
		return
	}
	t.settled = r.Seq
	d.detected.Add(1)
	d.log.Error("fingerprint: this node's copy of the tenant differs from the majority's: it stops serving the tenant and rebuilds it",
		"tenant", r.Tenant, "seq", r.Seq, "majority_sum", fmt.Sprintf("%x", majority[:8]), "members", d.members)
	d.pending[r.Tenant] = r.Seq
	d.handOver()
}

// handOver tells the hub of the divergences it has not taken yet: a tenant
// not open here stays pending until it opens, or its tally is swept.
// O(pending).
func (d *divergence) handOver() {
	for tenant, seq := range d.pending {
		if d.fps.Diverged(tenant, seq) {
			delete(d.pending, tenant)
		}
	}
}

// sweep drops the tenants none of whose nodes reported for tallyIdle.
// O(tenants).
func (d *divergence) sweep() {
	now := d.now()
	for tenant, t := range d.tenants {
		if now.Sub(t.last) > tallyIdle {
			delete(d.tenants, tenant)
			delete(d.pending, tenant)
		}
	}
}

// register adds the divergence metrics to reg.
func (d *divergence) register(reg *prometheus.Registry) {
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_divergence_detected_total",
		Help: "Times this node's state checkpoint of a tenant differed from the one a majority of the cluster published at the same sequence."},
		func() float64 { return float64(d.detected.Load()) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rankwire_divergence_rebuilding",
		Help: "Tenants this node serves none of because its copy diverged and is being rebuilt from the stream (reads and writes answer 503)."},
		func() float64 { return float64(d.fps.Rebuilding()) }))
}
