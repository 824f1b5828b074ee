package main

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rankwire/rankwire/internal/clusterops"
	"github.com/rankwire/rankwire/internal/electhold"
	"github.com/rankwire/rankwire/internal/reach"
	"github.com/rankwire/rankwire/internal/readiness"
)

// Whom this node hears (docs/CLUSTERING.md, "Cut off or electing"): every
// node of an embedded cluster publishes a beat every beatEvery on
// beatSubject, naming the peers it heard within beatSilence, and records
// the others' (internal/reach). NATS delivers a message from a route to
// local subscribers only, never to another route, so a beat arrives only
// over the direct route from its sender. From the table:
//
//   - readiness.Machine.ObserveReach at every beat: hearing fewer than a
//     majority of the servers is being cut off, not ready at once; missing
//     a peer that another still hears is a partial view, where a stream
//     leader that does not answer counts at once;
//   - in a non-transitive partition, where a peer heard every server this
//     node has missed for beatSilence after this node last did, and they
//     hear it back (reach.View.Bridge: not a load that delays one route's
//     beats, nor a starved peer that hears nobody, whose handovers cost an
//     election each under load), the stream leaderships this node holds are
//     handed to that peer, named (Raft's own choice on a step-down is any
//     peer heard within its live window of several seconds, so half the
//     time the one cut off a second ago: the leadership then went to
//     nobody and came back to this node at the next election), so that
//     the follower this node cannot reach stops starting elections that
//     the old leader keeps winning back;
//     where this node also leads the JetStream meta group, that leadership
//     is handed on too (through the system account), so that the follower
//     it cannot reach can replace its replica's consumer on the stream's
//     new leader without waiting for the meta group to re-elect;
//   - at the other end of that partition, where a peer this node has not
//     heard for two beats was heard since by another (reach.View.Relayed),
//     this node's replicas of the Raft groups that peer leads (streams,
//     the meta group) are held back from elections (internal/electhold)
//     until the leader is heard again or the leadership has moved to a
//     peer this node hears: the cut follower's election, called before
//     the leader's handover, deposed a leader that a majority still
//     heard, and the stream had no leader for a second or two
//     (docs/CLUSTERING.md, "The bridge's 3.148 s").
//
// Who counts as a cluster server: the members --routes names, and any
// other peer heard within reach.Forget, except that a peer's last beat
// before a clean stop says it is leaving (start's stop), and a peer taken
// out with `gateway cluster remove` is announced on removedSubject to
// every node (answerRemove): either drops it from the count at once
// (reach.Table.Remove), down to the configured members, which always
// count (a member's rolling restart must not shrink the majority).
//
// One goroutine, owned by the gateway through the stop returned by start,
// and at most one handover at a time, which start's stop awaits.

const (
	// beatSubject carries the beats on the cluster's own NATS; tenant
	// subjects are rw.<tenant>.*, so no tenant name reaches it.
	beatSubject = "rwnode.beats"
	// removedSubject carries, on the system account (clusterSystem), the
	// name of a peer `gateway cluster remove` took out of the meta group.
	removedSubject = "rwnode.removed"
	// leaveFlush bounds the wait for the leaving beat to leave this node.
	leaveFlush = 500 * time.Millisecond
	// beatEvery is the beats' period: the Raft heartbeat's (natsconf).
	beatEvery = 250 * time.Millisecond
	// beatSilence is how long a peer may not be heard before it counts as
	// unreachable: five beats, so that a loaded node that misses three or
	// four in a row is not counted cut off; within the 1–1.5 s of an
	// election's timeout, so a cut-off node knows it about when its
	// peers start to elect without it.
	beatSilence = 1250 * time.Millisecond
	// bridgeEvery bounds how often a node hands its leaderships on in a
	// non-transitive partition: once the new leader took over, the table
	// says so within a beat; a handover that failed is tried again.
	bridgeEvery = 3 * time.Second
	// bridgeSoon is the wait before the next handover where the last one
	// found a stream of this node's with no leader at all: the follower
	// this node cannot reach started an election before the handover
	// (its Raft timeout, 1-1.5 s, can end before beatSilence), which deposed
	// the leader (nats-server's Raft has no pre-vote), and the election
	// that follows may give the leadership back to this node: handed on
	// at the next beat, not bridgeEvery later, when the cut follower's
	// next election deposes it again (docs/CLUSTERING.md, "The bridge's
	// 3.007 s": a stall of 1.6 s each time). Only while a stream is
	// leaderless, so a node in a bridge does not read every stream's
	// state at every beat for the partition's duration.
	bridgeSoon = beatEvery
	// streamAsk bounds the request that hands one stream's leadership to a
	// named peer: its leader is this node, so it answers in milliseconds.
	streamAsk = 500 * time.Millisecond
)

// peerWatch is the beats' goroutine and what it needs.
type peerWatch struct {
	node string
	tab  *reach.Table // owned by the goroutine
	m    *readiness.Machine
	view *streamView       // the embedded server (its srv: the leaderships handed on in a bridge) and its streams, read once a beat (streamview.go)
	sys  *clusterSystem    // the meta leadership's step-down in a bridge; nil: not handed on
	hold *electhold.Holder // owned by the goroutine; nil: none (a test's watch)
	log  *slog.Logger

	handWG   sync.WaitGroup // the handover in flight, if any
	handBusy atomic.Bool    // a handover is in flight
	handSoon atomic.Bool    // the last handover saw a stream of this node's without a leader: bridgeSoon

	mu    sync.Mutex // guards the fields below, read by the metrics
	heard int
	of    int
	hears []string // the peers heard at the last beat (quorum.go)
	cut   int      // cut-offs seen since start
	moved int      // leaderships handed on in a bridge
	meta  int      // meta leaderships handed on in a bridge
	holds int      // Raft groups held back from elections (holdBack)
}

// newPeerWatch returns the watch of a clustered node with an embedded
// server (view's), or nil; sys, where not nil, hands the meta leadership
// on in a bridge.
func newPeerWatch(cfg Config, view *streamView, sys *clusterSystem, m *readiness.Machine, log *slog.Logger) *peerWatch {
	if cfg.Cluster == "" || view == nil {
		return nil
	}
	srv := view.srv
	return &peerWatch{node: srv.Name(), tab: reach.New(srv.Name(), clusterMembers(cfg.Routes), beatSilence, beatEvery), m: m, view: view, sys: sys,
		hold: electhold.New(srv), log: log}
}

// start subscribes to the beats and the removals, beats once (so that
// the readiness machine counts this node cut off until it hears its
// peers, rather than saying ready before its first beat) and runs the
// goroutine until stop, which waits for it and then sends this node's
// leaving beat: the last, so that no beat of this node's counts it again.
func (w *peerWatch) start(nc *nats.Conn) (stop func(), err error) {
	in, gone := make(chan *nats.Msg, 256), make(chan *nats.Msg, 16)
	sub, err := nc.ChanSubscribe(beatSubject, in)
	if err != nil {
		return nil, err
	}
	var subGone *nats.Subscription
	if w.sys != nil {
		if subGone, err = w.sys.nc.ChanSubscribe(removedSubject, gone); err != nil {
			_ = sub.Unsubscribe()
			return nil, err
		}
	}
	st := &beatState{cut: true} // a starting node hears nobody yet: no news, not a cut-off to count
	ctx, cancel := context.WithCancel(context.Background())
	w.beat(ctx, nc, st)
	var wg sync.WaitGroup
	wg.Go(func() { w.run(ctx, nc, in, gone, st) })
	return func() {
		_ = sub.Unsubscribe()
		if subGone != nil {
			_ = subGone.Unsubscribe()
		}
		cancel()
		wg.Wait()
		w.handWG.Wait()
		_ = nc.Publish(beatSubject, reach.Beat{Node: w.node, Leaving: true}.Marshal())
		_ = nc.FlushTimeout(leaveFlush) // best effort: a peer that misses it forgets this node after reach.Forget
	}, nil
}

// beatState is what the beats remember between them.
type beatState struct {
	cut        bool      // cut off at the last beat
	lastBridge time.Time // the last handover in a bridge
}

// run records the others' beats and removals and beats every beatEvery,
// until ctx ends.
func (w *peerWatch) run(ctx context.Context, nc *nats.Conn, in, gone <-chan *nats.Msg, st *beatState) {
	t := time.NewTicker(beatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-in:
			if b, err := reach.ParseBeat(m.Data); err == nil {
				if b.Leaving {
					w.log.Info("cluster peer stopped cleanly: counted no longer beyond --routes' members", "peer", b.Node)
				}
				w.tab.Heard(b, time.Now())
			}
		case m := <-gone:
			if peer := string(m.Data); peer != "" && peer != w.node {
				w.log.Info("cluster peer removed: counted no longer beyond --routes' members", "peer", peer)
				w.tab.Remove(peer)
			}
		case <-t.C:
			w.beat(ctx, nc, st)
		}
	}
}

// beat publishes this node's beat and judges its reach: the readiness
// machine's, the metrics', the log's, and a bridge's handover.
func (w *peerWatch) beat(ctx context.Context, nc *nats.Conn, st *beatState) {
	now := time.Now()
	w.tab.Prune(now)
	v := w.tab.View(now)                          // one reading of the table for the whole beat
	_ = nc.Publish(beatSubject, v.Beat.Marshal()) // fails only once closed
	w.m.ObserveReach(now, readiness.Reach{Heard: v.Heard, Of: v.Of, Within: beatSilence, Partial: v.Bridge != ""})
	cut := reach.CutOff(v.Heard, v.Of)
	w.record(v.Heard, v.Of, cut && !st.cut, v.Hears)
	if cut != st.cut {
		w.log.Warn("cluster reach", "cut_off", cut, "hears", v.Hears, "heard", v.Heard, "of", v.Of)
		st.cut = cut
	}
	if v.Bridge != "" && w.bridgeDue(now.Sub(st.lastBridge)) {
		st.lastBridge = now
		w.handOver(ctx, nc, v.Bridge, v.Hears)
	}
	w.holdBack(v.Relayed)
}

// holdBack holds this node's replicas of the Raft groups led by a relayed
// peer back from elections, and lets the others it held elect again (see
// the file comment). It reads this node's streams only while a peer is
// relayed or a group held: not at every beat of a healthy cluster.
func (w *peerWatch) holdBack(relayed []string) {
	if w.hold == nil || len(relayed) == 0 && len(w.hold.Held()) == 0 {
		return
	}
	var groups []string
	if len(relayed) > 0 {
		var err error
		if groups, err = w.ledBy(relayed); err != nil {
			w.log.Warn("cluster reach: this node's Raft groups not read; none held", "err", err)
		}
	}
	held, released := w.hold.Set(groups)
	if len(held) > 0 {
		w.mu.Lock()
		w.holds += len(held)
		w.mu.Unlock()
		w.log.Warn("cluster reach: leaders this node does not hear are heard by another: its replicas of their groups hold back from elections",
			"leaders", relayed, "groups", held)
	}
	if len(released) > 0 {
		w.log.Info("cluster reach: groups held back from elections may elect again", "groups", released)
	}
}

// ledBy returns the Raft groups of this node's replicated streams, and
// the meta group, whose leader as this node sees it is one of leaders.
func (w *peerWatch) ledBy(leaders []string) ([]string, error) {
	info, err := w.view.streams()
	if err != nil {
		return nil, err
	}
	var out []string
	if info.Meta != nil && slices.Contains(leaders, info.Meta.Leader) {
		out = append(out, electhold.MetaGroup)
	}
	for _, a := range info.AccountDetails {
		for _, s := range a.Streams {
			if c := s.Cluster; c != nil && len(c.Replicas) > 0 && c.RaftGroup != "" && slices.Contains(leaders, c.Leader) {
				out = append(out, c.RaftGroup)
			}
		}
	}
	return out, nil
}

// bridgeDue says whether a handover is due, since the last one.
func (w *peerWatch) bridgeDue(since time.Duration) bool {
	return since >= bridgeEvery || (since >= bridgeSoon && !w.handBusy.Load() && w.handSoon.Load())
}

// record keeps the reach for the metrics.
func (w *peerWatch) record(heard, of int, newCut bool, hears []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.heard, w.of, w.hears = heard, of, hears
	if newCut {
		w.cut++
	}
}

// handOver hands this node's stream leaderships, then its meta
// leadership, to via, in a goroutine of its own (the waits must not hold
// the beats back: a node silent for beatSilence counts as gone), at most
// one at a time and each bounded by bridgeEvery. The streams go first: the
// followers re-create their consumers on the streams' new leaders through
// the meta leader.
func (w *peerWatch) handOver(ctx context.Context, nc *nats.Conn, via string, hears []string) {
	if !w.handBusy.CompareAndSwap(false, true) {
		return
	}
	w.handWG.Go(func() {
		defer w.handBusy.Store(false)
		ctx, cancel := context.WithTimeout(ctx, bridgeEvery)
		defer cancel()
		w.handSoon.Store(w.handOn(ctx, nc, via, hears))
		w.handOnMeta(ctx, via)
	})
}

// handOn steps down from every replicated stream this node leads, read
// from the embedded server, naming via: a request to the stream's leader,
// this node, on nc (the streams' account), so no meta leader is asked.
// Where that fails, the server steps down in-process to Raft's choice.
// It reports whether a replicated stream of this node's had no leader in
// its view (leaderless: an election under way, which this node may win;
// see bridgeSoon).
func (w *peerWatch) handOn(ctx context.Context, nc *nats.Conn, via string, hears []string) (leaderless bool) {
	info, err := w.view.streams() // a beat old at most: a stream just moved fails its step-down, retried
	if err != nil {
		w.log.Warn("bridge: this node's streams not read", "err", err)
		return false
	}
	var moved, none []string
	for _, a := range info.AccountDetails {
		for _, s := range a.Streams {
			if c := s.Cluster; c != nil && c.Leader == "" && len(c.Replicas) > 0 {
				none = append(none, s.Name)
			}
			if c := s.Cluster; c == nil || c.Leader != w.node || len(c.Replicas) == 0 {
				continue
			}
			if err := w.stepDownStream(ctx, nc, a.Name, s.Name, via); err != nil {
				w.log.Warn("bridge: stream leadership not handed on", "stream", s.Name, "err", err)
				continue
			}
			moved = append(moved, s.Name)
		}
	}
	if len(none) > 0 {
		slices.Sort(none)
		w.log.Info("bridge: streams without a leader here (an election under way): handed on at the next beat if this node wins it",
			"via", via, "streams", none)
	}
	if len(moved) == 0 {
		return len(none) > 0
	}
	slices.Sort(moved)
	w.mu.Lock()
	w.moved += len(moved)
	w.mu.Unlock()
	w.log.Warn("bridge: peers this node no longer hears are heard by another that hears it: stream leaderships handed on",
		"via", via, "hears", hears, "streams", moved)
	return len(none) > 0
}

// stepDownStream hands stream's leadership to via, or to Raft's choice
// where the request naming via is not answered within streamAsk.
func (w *peerWatch) stepDownStream(ctx context.Context, nc *nats.Conn, account, stream, via string) error {
	ask, cancel := context.WithTimeout(ctx, streamAsk)
	defer cancel()
	err := clusterops.StepDownStreamTo(ask, nc, stream, via)
	if err == nil {
		return nil
	}
	w.log.Info("bridge: stream leadership not handed to the peer that hears everyone; to Raft's choice", "stream", stream, "via", via, "err", err)
	return w.view.srv.JetStreamStepdownStream(account, stream)
}

// handOnMeta steps the meta group's leadership down to via where this
// node holds it, through the in-process system connection (the meta
// leader it asks is this node: no route is crossed), and awaits the new
// meta leader until ctx ends.
func (w *peerWatch) handOnMeta(ctx context.Context, via string) {
	if w.sys == nil || w.sys.metaLeader() != w.node {
		return
	}
	h := clusterops.StepDownMetaTo(ctx, w.sys.nc, w.node, via, w.sys.metaLeader)
	switch {
	case !h.Led: // another node took it meanwhile
	case h.Err != nil:
		w.log.Warn("bridge: meta leadership not handed on", "via", via, "err", h.Err, "took", h.Took.Round(time.Millisecond))
	default:
		w.mu.Lock()
		w.meta++
		w.mu.Unlock()
		w.log.Warn("bridge: peers this node no longer hears are heard by another that hears it: meta leadership handed on",
			"via", via, "leader", h.Leader, "took", h.Took.Round(time.Millisecond))
	}
}

// register adds the reach metrics to reg.
func (w *peerWatch) register(reg *prometheus.Registry) {
	get := func(f func() float64) func() float64 {
		return func() float64 { w.mu.Lock(); defer w.mu.Unlock(); return f() }
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rankwire_cluster_servers_heard",
			Help: "Cluster servers this node heard a beat from within 1.25 s, itself included."},
			get(func() float64 { return float64(w.heard) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rankwire_cluster_servers",
			Help: "Cluster servers counted for the majority: --routes' listeners, or more where more were heard and neither stopped cleanly nor were removed."},
			get(func() float64 { return float64(w.of) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_cluster_cutoffs_total",
			Help: "Times this node heard fewer than a majority of the cluster's servers (not ready at once)."},
			get(func() float64 { return float64(w.cut) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_cluster_bridge_stepdowns_total",
			Help: "Stream leaderships this node handed on because a peer it cannot hear is heard by another (a non-transitive partition)."},
			get(func() float64 { return float64(w.moved) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_cluster_election_holds_total",
			Help: "Raft groups (streams, the meta group) this node held back from elections because their leader, unheard here, was heard by another (a non-transitive partition)."},
			get(func() float64 { return float64(w.holds) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_cluster_bridge_meta_stepdowns_total",
			Help: "Times this node handed the JetStream meta group's leadership on because a peer it cannot hear is heard by another (a non-transitive partition)."},
			get(func() float64 { return float64(w.meta) })),
	)
}
