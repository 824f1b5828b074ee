package faults

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	rwclient "github.com/rankwire/rankwire/client"
)

// Board is the suite's board: policy sum, so that a member's score counts
// its applied submissions of 1.
const Board = "sum"

// writer is one SDK writer: it owns member w<i> and submits 1 at a time.
// Its fields are its goroutine's until the load stops.
type writer struct {
	c        *rwclient.Client
	member   string
	acked    int // submissions acknowledged
	unsure   int // calls that failed: applied or not
	gap      time.Duration
	lastAck  time.Time
	firstErr error
	errs     map[string]int // failed calls by errKind
	trace    *reqTrace      // its requests since the last acknowledgement
	longest  gapTrace       // its longest gap between acknowledgements
	slow     []gapTrace     // its first maxTracedGaps gaps over traceSlowest
	acks     []time.Time
}

func (w *writer) run(ctx context.Context, start time.Time, pace time.Duration) {
	w.lastAck = start
	for ctx.Err() == nil {
		_, err := w.c.Submit(ctx, Board, rwclient.Score{Member: w.member, Score: 1})
		now := time.Now()
		switch {
		case err == nil:
			w.acked++
			w.noteGap(now)
			w.lastAck = now
		case ctx.Err() != nil:
			w.unsure++ // cancelled in flight: it may have applied
		default:
			w.unsure++
			if w.errs == nil {
				w.errs = map[string]int{}
			}
			w.errs[errKind(err)]++
			if w.firstErr == nil {
				w.firstErr = err
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(pace):
		}
	}
	w.gap = max(w.gap, time.Since(w.lastAck))
}

// noteGap measures the gap from the last acknowledgement to now and, where
// it is the writer's longest, keeps its requests.
func (w *writer) noteGap(now time.Time) {
	gap := now.Sub(w.lastAck)
	w.acks = append(w.acks, now)
	g := gapTrace{writer: w.member, from: w.lastAck, to: now, reqs: w.trace.cut(w.lastAck, now)}
	if gap > traceSlowest && len(w.slow) < maxTracedGaps {
		w.slow = append(w.slow, g)
	}
	if gap > w.gap {
		w.gap, w.longest = gap, g
	}
}

// errKind is a failed call's error without its figures (addresses,
// durations), so that a run's failed calls can be counted by kind.
func errKind(err error) string {
	if e, ok := errors.AsType[*rwclient.Error](err); ok {
		return fmt.Sprintf("%d %s", e.Status, e.Code)
	}
	return shape(err.Error())
}

// watcher is a WebSocket watcher of the board's top starting on one node
// (it fails over to the others): its longest silence between two states
// while the load ran, and its chain (chain.go). It watches on after the
// load stops, until finishWatchers saw it reach the final standings.
type watcher struct {
	c    *rwclient.Client
	node string
	gap  time.Duration
	last time.Time // its last state before the load stopped
	// mu guards chain and moved; moved is closed and replaced at each
	// state, for finishWatchers to await the next.
	mu    sync.Mutex
	chain Chain
	moved chan struct{}
}

// run watches until ctx ends; load is the load's context: the states after
// it ended are the catch-up, not counted in the silence.
func (w *watcher) run(ctx, load context.Context, start time.Time) {
	w.last = start
	for st, err := range w.c.Watch(ctx, Board, rwclient.Top(watchTop), rwclient.WatchReadTimeout(2*time.Second),
		rwclient.WatchBackoff(100*time.Millisecond, time.Second)) {
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			w.mu.Lock()
			w.chain.brk("the watch ended: %v", err) // Watch yields only the errors it ends on
			w.mu.Unlock()
			continue
		}
		if load.Err() == nil {
			now := time.Now()
			w.gap = max(w.gap, now.Sub(w.last))
			w.last = now
		}
		w.mu.Lock()
		w.chain.see(st)
		close(w.moved)
		w.moved = make(chan struct{})
		w.mu.Unlock()
	}
}

// readyPoller asks one node's /readyz and reads its board every 100 ms:
// it sums the time the node did not answer 200 while counted says it
// should be healthy, and the time it answered 200 while its reads were
// older than StaleBound. A probe counts only where counted held both
// before it was sent and after its tick: a restarted node is counted
// again as soon as the fault's WaitReady saw it answer 200, and a probe
// sent just before, answered 503 while the node was still starting, is
// not a flap of a healthy node (it made the rolling restart's healthy
// nodes look not ready for 0.10–0.20 s, and kill -9's up to 0.10 s, while
// no node's readiness ever changed). Each counted non-200 answer's reason
// goes into flaps.
type readyPoller struct {
	n          *Node
	token      string
	fresh      *freshness
	start      time.Time // the load's start: flaps' offsets count from it
	notReady   time.Duration
	readyStale time.Duration
	worstAge   time.Duration // the oldest read served while ready
	flaps      []Flap        // the counted non-200 answers, by cause
	every      time.Duration // the probes' period; zero: 100 ms
	truth      *truthLog     // where each answer and read goes for the readiness truth; nil: nowhere
}

func (p *readyPoller) run(ctx context.Context, counted func(*Node) bool) {
	hc := &http.Client{Timeout: 500 * time.Millisecond}
	tick := time.NewTicker(cmp(p.every, 100*time.Millisecond))
	defer tick.Stop()
	flapped := false // the last probe was a counted non-200 answer
	for {
		t0 := time.Now()
		before := counted(p.n)
		ready, why := askReady(ctx, hc, p.n)
		readyAt := time.Now()
		seq, readOK := readSeq(ctx, hc, p.n, p.token)
		if ctx.Err() != nil {
			// The load stopped while the probe was in flight: its "context
			// canceled" is the poller's, not the node's (select below may
			// pick the tick as well as Done).
			return
		}
		var age time.Duration
		if readOK {
			now := time.Now()
			age = p.fresh.saw(seq, now)
			p.truth.addRead(now, age)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		healthy := before && counted(p.n)
		p.truth.addReady(readyAt, ready, healthy)
		flap := !ready && healthy
		if flap {
			p.notReady += time.Since(t0)
			p.flaps = addFlap(p.flaps, p.n.Name, t0.Sub(p.start), why, flapped)
		}
		flapped = flap
		if ready && readOK {
			p.worstAge = max(p.worstAge, age)
			if age > StaleBound {
				p.readyStale += time.Since(t0)
			}
		}
	}
}

// Load is a run's writers, watchers and readiness pollers.
type Load struct {
	writers  []*writer
	watchers []*watcher
	pollers  []*readyPoller
	truths   []*truthLog // per node: its /readyz against what it could do (truth.go)
	stalls   stallMeter
	start    time.Time // when the writers started
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	// The watchers have a context of their own: they watch on after the
	// load stops (StopLoad), until finishWatchers or Stop.
	stopWatch context.CancelFunc
	watchWG   sync.WaitGroup
	stopped   time.Time // when StopLoad stopped the load
}

// rotated returns the cluster's URLs starting at node k.
func rotated(c *Cluster, k int) []string {
	var urls []string
	for _, n := range c.Nodes {
		urls = append(urls, n.URL())
	}
	return append(slices.Clone(urls[k:]), urls[:k]...)
}

// writerURLs returns writer i's URLs: it starts at node i mod n, and every
// second writer of a node lists the others the other way round. A fault's
// target and its cut are placed by index (partition-bridge cuts the leader
// from the node after it), so with one order only every writer of a node
// would fail over to the same node first: the leader's always to the node
// cut from it. With both, each run measures both ways out of each node.
func writerURLs(c *Cluster, i int) []string {
	n := len(c.Nodes)
	urls := rotated(c, i%n)
	if (i/n)%2 == 1 {
		slices.Reverse(urls[1:])
	}
	return urls
}

// StartLoad creates the board and starts nWriters writers (spread over the
// nodes, each with every node to fail over to: writerURLs), a watcher and a /readyz
// poller per node. counted tells the pollers which nodes should be ready.
func StartLoad(ctx context.Context, c *Cluster, nWriters int, pace time.Duration, counted func(*Node) bool) (*Load, error) {
	admin, err := rwclient.New(rotated(c, 0), rwclient.WithToken(c.Token))
	if err != nil {
		return nil, err
	}
	if _, err := admin.PutBoard(ctx, Board, rwclient.Settings{Policy: "sum"}); err != nil {
		return nil, fmt.Errorf("faults: create board: %w", err)
	}
	if err := boardEverywhere(ctx, c, 30*time.Second); err != nil {
		return nil, err
	}
	wctx, stopWatch := context.WithCancel(ctx)
	ctx, cancel := context.WithCancel(ctx)
	l := &Load{cancel: cancel, stopWatch: stopWatch}
	start := time.Now()
	l.start = start
	l.wg.Go(func() { l.stalls.run(ctx) })
	fresh := &freshness{}
	for i := range nWriters {
		tr := &reqTrace{next: http.DefaultTransport}
		cl, err := rwclient.New(writerURLs(c, i), rwclient.WithToken(c.Token),
			rwclient.WithAttemptTimeouts(2*time.Second, 2*time.Second),
			rwclient.WithHTTPClient(&http.Client{Timeout: 30 * time.Second, Transport: tr}))
		if err != nil {
			l.Stop() // the goroutines already started
			return nil, err
		}
		w := &writer{c: cl, member: fmt.Sprintf("w%d", i), trace: tr}
		l.writers = append(l.writers, w)
		l.wg.Go(func() { w.run(ctx, start, pace) })
	}
	for k, n := range c.Nodes {
		cl, err := rwclient.New(rotated(c, k), rwclient.WithToken(c.Token))
		if err != nil {
			l.Stop() // the goroutines already started
			return nil, err
		}
		w := &watcher{c: cl, node: n.Name, chain: Chain{Node: n.Name}, moved: make(chan struct{})}
		l.watchers = append(l.watchers, w)
		l.watchWG.Go(func() { w.run(wctx, ctx, start) })
		tl := &truthLog{node: n.Name}
		pr, err := newWriteProber(n, c.Token, tl)
		if err != nil {
			l.Stop() // the goroutines already started
			return nil, err
		}
		l.truths = append(l.truths, tl)
		l.wg.Go(func() { pr.run(ctx) })
		p := &readyPoller{n: n, token: c.Token, fresh: fresh, start: start, truth: tl}
		l.pollers = append(l.pollers, p)
		l.wg.Go(func() { p.run(ctx, counted) })
	}
	return l, nil
}

// Stop stops the load and the watchers and waits for their goroutines;
// a watcher's silence counts up to the load's stop.
func (l *Load) Stop() {
	l.StopLoad()
	l.stopWatch()
	l.watchWG.Wait()
	for _, w := range l.watchers {
		w.gap = max(w.gap, l.stopped.Sub(w.last))
	}
}

// StopLoad stops the writers, the pollers and the stall meter and waits
// for them; the watchers watch on (finishWatchers).
func (l *Load) StopLoad() {
	if l.stopped.IsZero() {
		l.stopped = time.Now()
	}
	l.cancel()
	l.wg.Wait()
}

// boardEverywhere waits up to limit until every node has the board: the
// node that created it answered once it applied it, the others apply it a
// moment later, and a writer's first call through one of them would be
// answered not found (a failed call that widens the checker's margin).
func boardEverywhere(ctx context.Context, c *Cluster, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for _, n := range c.Nodes {
		for {
			cl, err := rwclient.New([]string{n.URL()}, rwclient.WithToken(c.Token))
			if err != nil {
				return err
			}
			if _, err = cl.Top(ctx, Board, rwclient.ReadOptions{Limit: 1}); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("faults: %s has no board %q %v after it was created: %w", n.Name, Board, limit, err)
			}
			sleep(ctx, 50*time.Millisecond) // polling the node: nothing to await but its answer
		}
	}
	return nil
}
