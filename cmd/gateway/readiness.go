package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/readiness"
)

// The readiness prober: every probeEvery it observes what /readyz decides
// on (internal/readiness) and feeds the machine. One goroutine, owned by
// the gateway: started by startAPI, stopped before the hub closes.

const (
	// probeEvery is how often the prober observes: 6 observations within
	// the default hold of 3 s.
	probeEvery = 500 * time.Millisecond
	// probeTimeout bounds an observation's requests: a leader that does
	// not answer within it is not reachable.
	probeTimeout = time.Second
	// probeParallel bounds the stream info requests in flight at once.
	probeParallel = 8
	// probeBatch bounds the tenants whose stream is asked per observation
	// (one STREAM.INFO each, answered by the stream's leader): past it
	// they take turns, each asked every ceil(tenants/64) observations.
	probeBatch = 64
)

// prober observes the hub for a readiness.Machine. Its fields below log
// are owned by the observing goroutine (start's first observation, then
// run's).
type prober struct {
	h   *hub.Hub
	m   *readiness.Machine
	log *slog.Logger
	// rebuilding counts the tenants out of service after a divergence
	// (divergence.go); nil without a cluster.
	rebuilding func() int
	// gate is the NATS server's start-up work, asked until the node was
	// first ready; nil outside an embedded cluster.
	gate *startGate
	// peers counts a leaderless stream's replicas this node reaches and
	// remembers each stream's members (quorum.go); nil without a cluster.
	peers *peerWatch
	seen  map[string]answer // tenant → its stream's last answer
	turn  int               // the first tenant of the next batch, past probeBatch
}

// start observes once, so that the machine has a verdict before the API
// serves, then runs the prober until the returned stop is called; stop
// waits for it.
func (p *prober) start() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	p.judge(p.observe(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { p.run(ctx) })
	return func() { cancel(); wg.Wait() }
}

// run observes every probeEvery until ctx ends, logging each change of the
// verdict, and while not ready its reason every few seconds.
func (p *prober) run(ctx context.Context) {
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	var lastLog time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		v, changed := p.judge(p.observe(ctx))
		switch {
		case changed && v.Ready:
			p.log.Info("readiness: ready")
		case changed, !v.Ready && time.Since(lastLog) > 5*time.Second:
			p.log.Warn("readiness: not ready", "reason", v.Detail)
			lastLog = time.Now()
		}
	}
}

// observe takes one observation, in probeTimeout or a little more: the
// store first (microseconds on the embedded server), then every open
// tenant's stream within what is left, or, where none is open, the
// JetStream API. The
// store's answer counts as this node's own (at once) where it is full or
// disconnected, else as the cluster's (held).
func (p *prober) observe(ctx context.Context) readiness.Observation {
	o := readiness.Observation{Serving: true} // the gateway answers not serving itself: readiness()
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var storeMeta string
	if err := p.h.Writable(ctx); err != nil {
		// Full, or cut from NATS: this node's own, at once. Anything else
		// (no JetStream cluster leader, JetStream restarting) may be the
		// whole cluster's for the length of an election: held.
		if errors.Is(err, hub.ErrStoreFull) || !p.h.Connected() {
			o.Store = errText(err)
		} else {
			storeMeta = errText(err)
		}
	}
	o.Tenants = p.tenants(ctx)
	if len(o.Tenants) == 0 {
		// The API counts only where no tenant is open (Observation.Meta):
		// elsewhere the tenants' streams say it all, and asking the meta
		// leader every probe would be work for an answer never read.
		o.Meta = p.askAPI(ctx)
	}
	if storeMeta != "" {
		o.Meta = storeMeta
	}
	if p.rebuilding != nil {
		o.Rebuilding = p.rebuilding()
	}
	o.At = time.Now() // after the requests: when it saw
	return o
}

// judge feeds o to the machine with the start-up gate's reason, asked
// only until the node was first ready (the machine counts it only then),
// and tells the gate when it alone held readiness: its bound counts from
// then (startGateMax).
func (p *prober) judge(o readiness.Observation) (readiness.Verdict, bool) {
	if p.m.Flips() == 0 {
		o.Starting = p.gate.reason(o.At)
	}
	v, changed := p.m.Observe(o)
	if v.OnlyStarting {
		p.gate.heldAlone(o.At)
	}
	return v, changed
}

// askAPI asks the JetStream API for the account's info: in a cluster the
// meta leader answers, so an answer says a write can be placed. Empty: it
// answered.
func (p *prober) askAPI(ctx context.Context) string {
	err := p.h.JetStreamAPI(func() error { _, err := p.h.JetStream().AccountInfo(ctx); return err })
	if err != nil {
		return errText(err)
	}
	return ""
}

// tenants observes every open tenant's replica and its stream's leader,
// probeParallel at a time, until ctx ends: a tenant not asked by then has
// "no answer", as one whose leader is silent. Past probeBatch tenants they
// take turns: the others keep their last answer (lastAnswers).
func (p *prober) tenants(ctx context.Context) []readiness.Tenant {
	stats := p.h.Stats()
	out := p.lastAnswers(stats)
	answers := make([]members, len(stats)) // the stream's replicas as its answer named them
	sem := make(chan struct{}, probeParallel)
	var wg sync.WaitGroup
	for _, i := range p.batch(len(stats)) {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i].Asked = time.Now() // before the request: its answer is at least as new
			out[i].Last, out[i].Leader, answers[i] = p.leader(ctx, out[i].Name)
			// The replica's watchdog replaces a consumer that delivers nothing
			// while its stream is ahead of it, even on a node that takes no
			// writes (hub/follow.go): it learns how far ahead here.
			hub.NoteStreamLast(p.h, out[i].Name, out[i].Last)
		})
	}
	wg.Wait()
	p.countReplicas(out, answers)
	p.remember(out)
	return out
}

// remember keeps the answers of ts, the tenants open now, for the
// observations at which they are not asked (lastAnswers).
func (p *prober) remember(ts []readiness.Tenant) {
	seen := make(map[string]answer, len(ts))
	for _, t := range ts {
		seen[t.Name] = answer{t.Last, t.Leader, t.Asked}
	}
	p.seen = seen
}

// answer is what a tenant's stream answered when last asked, and when it
// was asked.
type answer struct {
	last   uint64
	leader string
	asked  time.Time
}

// notAsked is the Leader of a tenant whose stream was never asked (past
// probeBatch, not yet its turn), before the node was first ready.
const notAsked = "not asked yet"

// neverAsked is the Asked of a tenant whose stream was never asked: before
// any cut or pause's start, so that it clears none (readiness.Tenant.Asked;
// zero would mean asked at this observation).
var neverAsked = time.Unix(0, 0)

// lastAnswers returns the tenants of stats with their replica's applied
// sequence and their stream's last answer. Before the first ready, a
// tenant never asked has none (notAsked: no leader answered), not the
// zero answer, an empty stream's: that would count as its stream's first
// answer, found caught up, and neither the machine's start rule (a
// replica behind at its stream's first answer is stale until it has
// applied it) nor its wait would hold for it. Once ready, a tenant opened
// since is mostly a new one, its stream empty, and it is asked in turn;
// until then its answer, never asked, does not end a cut or a pause's
// start (neverAsked). A tenant asked before keeps its answer's time: one
// asked before a cut does not end it either.
func (p *prober) lastAnswers(stats []hub.TenantStats) []readiness.Tenant {
	starting := p.m.Flips() == 0
	out := make([]readiness.Tenant, len(stats))
	for i, st := range stats {
		a, ok := p.seen[st.Tenant]
		if !ok {
			a.asked = neverAsked
			if starting {
				a.leader = notAsked
			}
		}
		out[i] = readiness.Tenant{Name: st.Tenant, Applied: st.Applied, Last: a.last, Leader: a.leader, Asked: a.asked}
	}
	return out
}

// batch returns the indexes of the n tenants to ask now: all up to
// probeBatch, else the next probeBatch in turn.
func (p *prober) batch(n int) []int {
	k := min(n, probeBatch)
	out := make([]int, k)
	for j := range out {
		out[j] = (p.turn + j) % n
	}
	if n > probeBatch {
		p.turn = (p.turn + k) % n
	}
	return out
}

// leader asks tenant's stream for its info, which its leader answers, and
// returns the stream's last sequence, or why no leader answered, and the
// replicas the answer named: the leader and the others where a leader
// answered, every replica where a replica answered without a leader (a
// leaderless member lists itself among them).
func (p *prober) leader(ctx context.Context, tenant string) (uint64, string, members) {
	var info *jetstream.StreamInfo
	err := p.h.JetStreamAPI(func() error {
		s, err := p.h.JetStream().Stream(ctx, hub.StreamOf(tenant))
		if err == nil {
			info = s.CachedInfo()
		}
		return err
	})
	switch {
	case err != nil:
		return 0, errText(err), members{}
	case info.Cluster == nil:
		return info.State.LastSeq, "", members{}
	}
	m := membersIn(info.Cluster)
	if !m.led {
		return 0, "no leader elected", m
	}
	if up, of := reachable(info.Cluster); up <= of/2 {
		// A leader cut from its followers still answers, for a while, as
		// leader: it can commit nothing.
		return 0, fmt.Sprintf("its leader reaches %d of %d replicas, fewer than a majority", up, of), m
	}
	return info.State.LastSeq, "", m
}

// replicaSilence is how long a stream's leader may not have heard from a
// replica before the replica counts as unreachable: six Raft heartbeats
// of the embedded server (250 ms), one and a half of nats-server's
// defaults (1 s; a late one is absorbed by --ready-hold).
const replicaSilence = 1500 * time.Millisecond

// reachable counts the replicas of a stream its leader has heard from
// within replicaSilence, itself included, of all; 1 of 1 without a
// cluster.
func reachable(c *jetstream.ClusterInfo) (up, of int) {
	if c == nil {
		return 1, 1
	}
	up, of = 1, 1+len(c.Replicas)
	for _, r := range c.Replicas {
		if !r.Offline && r.Active <= replicaSilence {
			up++
		}
	}
	return up, of
}

// errText is err's text for a reason: a hub error's message for clients
// (as every answer gives it), a timeout's in words, else the error's own.
func errText(err error) string {
	var he *hub.Error
	switch {
	case errors.As(err, &he):
		return he.Msg
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer within " + probeTimeout.String()
	}
	return err.Error()
}

// readiness answers /readyz: not ready while the API does not serve (yet,
// or any more), else the machine's verdict now.
func (g *gateway) readiness() (bool, string) {
	if !g.serving.Load() {
		return false, "not serving yet, or shutting down"
	}
	v := g.ready.Verdict(time.Now())
	return v.Ready, v.Reason
}

// tenantStatus is a heartbeat's view of tenant on this node.
func (g *gateway) tenantStatus(tenant string) (writable, stale bool) {
	s := g.ready.Tenant(tenant, time.Now())
	return s.Writable, s.Stale
}

// registerReadiness registers the readiness metrics on reg: whether the
// node is ready now and how often the verdict changed.
func registerReadiness(reg *prometheus.Registry, g *gateway) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rankwire_ready",
			Help: "1 while /readyz answers 200: this node can acknowledge its tenants' writes and serves them fresh."},
			func() float64 {
				if ok, _ := g.readiness(); ok {
					return 1
				}
				return 0
			}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_ready_changes_total",
			Help: "Changes of the readiness verdict between ready and not ready (the first ready included)."},
			func() float64 { return float64(g.ready.Flips()) }),
	)
}
