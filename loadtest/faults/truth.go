package faults

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	rwclient "github.com/rankwire/rankwire/client"
)

// Readiness truth: how long each node's /readyz disagreed with what the
// node could do (docs/CLUSTERING.md, "Fault suite", "Readiness truth").
// The ground truth of a node at time t is "ready" where both hold:
//
//   - writable: no write probe through the node alone (writeProber, one
//     sent every probeEvery, each with probeDeadline) stands unanswered at
//     t: a probe sent at s and not acknowledged within probeDeadline makes
//     the node unwritable from s until s+probeDeadline or the first
//     acknowledgement of any probe after s, whichever comes first (an
//     acknowledgement proves the node could write then);
//   - fresh: its latest read (the readyPoller's) was at most maxLag old
//     (freshness: the time since some node first served a newer seq).
//
// /readyz "says ready" from an answer 200 until the next answer that is
// not 200, or no answer within the poller's 500 ms; each answer counts from
// its arrival.

// Bounds of the readiness truth.
const (
	// ReadyWrongBound is the longest /readyz may disagree with the truth
	// after a fault begins or ends: issue 25's target.
	ReadyWrongBound = 3 * time.Second
	// probeDeadline is how soon a write must be acknowledged for the node
	// to count as writable: the suite's writers' attempt deadline, after
	// which the SDK moves to another node.
	probeDeadline = 2 * time.Second
	// probeEvery is the write probes' period per node.
	probeEvery = 100 * time.Millisecond
	// maxLag is the staleness a ready node may have: the gateway's default
	// --max-lag.
	maxLag = 3 * time.Second
	// mergeGap joins two disagreements of the same kind separated by an
	// agreement shorter than it (sampling flicker), so that a wrong
	// stretch is not understated by being split.
	mergeGap = 300 * time.Millisecond
)

// step is one observation of a boolean series at a time.
type step struct {
	at time.Time
	ok bool
}

// probeOutcome is one write probe: sent at sent, acknowledged at acked
// (zero: not within probeDeadline).
type probeOutcome struct {
	sent, acked time.Time
}

// truthLog is one node's /readyz answers, reads and write probes. Safe for
// concurrent use.
type truthLog struct {
	node   string
	mu     sync.Mutex // guards the fields below
	ready  []step     // /readyz: 200 or not, at each answer's arrival
	fresh  []step     // reads: at most maxLag old, at each read's arrival
	probes []probeOutcome
	counts []step // whether the node was counted healthy, at each /readyz answer
}

func (l *truthLog) addReady(at time.Time, ready, counted bool) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ready = append(l.ready, step{at, ready})
	l.counts = append(l.counts, step{at, counted})
}

func (l *truthLog) addRead(at time.Time, age time.Duration) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fresh = append(l.fresh, step{at, age <= maxLag})
}

func (l *truthLog) addProbe(p probeOutcome) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.probes = append(l.probes, p)
}

// writable turns write probes into a series of change points: false at the
// send of each probe not acknowledged within probeDeadline, true again at
// the first acknowledgement after that send, or probeDeadline after it.
func writable(probes []probeOutcome) []step {
	var acks []time.Time
	for _, p := range probes {
		if !p.acked.IsZero() {
			acks = append(acks, p.acked)
		}
	}
	slices.SortFunc(acks, time.Time.Compare)
	var out []step
	for _, p := range probes {
		if !p.acked.IsZero() {
			out = append(out, step{p.acked, true})
			continue
		}
		until := p.sent.Add(probeDeadline)
		if i, _ := slices.BinarySearchFunc(acks, p.sent, time.Time.Compare); i < len(acks) && acks[i].Before(until) {
			until = acks[i]
		}
		out = append(out, step{p.sent, false}, step{until, true})
	}
	// Where a failed probe's stretch and another's overlap, the later
	// false must win over the earlier one's true: keep "false" while any
	// stretch is open, by counting them.
	return unionFalse(out)
}

// unionFalse turns steps whose false stretches may overlap (each false
// followed later by its own true) into a series that is false while any
// stretch is open. Acknowledgements outside every stretch pass as true.
func unionFalse(in []step) []step {
	type edge struct {
		at   time.Time
		open int // +1 a stretch opens, -1 one closes, 0 an acknowledgement
	}
	var edges []edge
	for i := 0; i < len(in); i++ {
		if !in[i].ok {
			edges = append(edges, edge{in[i].at, 1}, edge{in[i+1].at, -1})
			i++
			continue
		}
		edges = append(edges, edge{in[i].at, 0})
	}
	slices.SortStableFunc(edges, func(a, b edge) int { return a.at.Compare(b.at) })
	var out []step
	open := 0
	for _, e := range edges {
		open += e.open
		out = append(out, step{e.at, open == 0})
	}
	return out
}

// wrongKind says which way /readyz was wrong.
type wrongKind int

const (
	readyWhileNot    wrongKind = iota // 200 while the node could not write or was stale: a fault began
	notReadyWhileCan                  // not 200 while it could write and was fresh: a fault ended
)

// wrongSpan is one stretch in which a node's /readyz disagreed with its
// truth.
type wrongSpan struct {
	node     string
	kind     wrongKind
	from, to time.Time
}

func (w wrongSpan) length() time.Duration { return w.to.Sub(w.from) }

// series is a step function read forward in time.
type series struct {
	s   []step
	i   int
	val bool
	set bool
}

// at advances to t and says the value then (false, false before the first step).
func (s *series) at(t time.Time) (bool, bool) {
	for s.i < len(s.s) && !s.s[s.i].at.After(t) {
		s.val, s.set = s.s[s.i].ok, true
		s.i++
	}
	return s.val, s.set
}

// disagreements returns the stretches in which ready disagreed with
// writable and fresh, from the time all three have a value to the last
// change of the shortest-lived, each of one kind, those of one kind
// closer than mergeGap joined.
func disagreements(node string, ready, write, fresh []step) []wrongSpan {
	if len(ready) == 0 || len(write) == 0 || len(fresh) == 0 {
		return nil
	}
	var times []time.Time
	for _, ss := range [][]step{ready, write, fresh} {
		for _, s := range ss {
			times = append(times, s.at)
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	times = slices.Compact(times)
	end := slices.MinFunc([]time.Time{ready[len(ready)-1].at, write[len(write)-1].at, fresh[len(fresh)-1].at}, time.Time.Compare)
	r, w, f := &series{s: ready}, &series{s: write}, &series{s: fresh}
	var out []wrongSpan
	for i, t := range times {
		if t.After(end) || i+1 == len(times) {
			break
		}
		rv, ok1 := r.at(t)
		wv, ok2 := w.at(t)
		fv, ok3 := f.at(t)
		if !ok1 || !ok2 || !ok3 || rv == (wv && fv) {
			continue
		}
		kind := readyWhileNot
		if !rv {
			kind = notReadyWhileCan
		}
		next := times[i+1]
		if next.After(end) {
			next = end
		}
		if k := len(out) - 1; k >= 0 && out[k].kind == kind && t.Sub(out[k].to) < mergeGap {
			out[k].to = next
			continue
		}
		out = append(out, wrongSpan{node: node, kind: kind, from: t, to: next})
	}
	return out
}

// flaps counts the stretches of consecutive /readyz answers that were not
// 200 while the node was counted healthy.
func flaps(ready, counts []step) int {
	n, in := 0, false
	for i, r := range ready {
		bad := !r.ok && counts[i].ok
		if bad && !in {
			n++
		}
		in = bad
	}
	return n
}

// verdict is what one node's log says.
func (l *truthLog) verdict() ([]wrongSpan, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fresh := slices.Clone(l.fresh)
	slices.SortStableFunc(fresh, func(a, b step) int { return a.at.Compare(b.at) })
	return disagreements(l.node, l.ready, writable(l.probes), fresh), flaps(l.ready, l.counts)
}

// ReadyTruth is a run's readiness truth over every node.
type ReadyTruth struct {
	ReadyWhileNot    time.Duration // the longest stretch any node said ready while it could not write or was stale
	NotReadyWhileCan time.Duration // the longest stretch any node said not ready while it could write and was fresh
	HealthyFlaps     int           // stretches of non-200 answers of nodes counted healthy
	Worst            []string      // each kind's longest stretch: node, offset from the load's start, length
	Over             []string      // every stretch longer than ReadyWrongBound
}

// readyTruth sums the nodes' logs; offsets count from start.
func readyTruth(logs []*truthLog, start time.Time) ReadyTruth {
	var rt ReadyTruth
	var worst [2]wrongSpan
	for _, l := range logs {
		spans, n := l.verdict()
		rt.HealthyFlaps += n
		for _, s := range spans {
			if s.length() > worst[s.kind].length() {
				worst[s.kind] = s
			}
			if s.length() > ReadyWrongBound {
				rt.Over = append(rt.Over, s.describe(start))
			}
		}
	}
	rt.ReadyWhileNot, rt.NotReadyWhileCan = worst[readyWhileNot].length(), worst[notReadyWhileCan].length()
	for _, w := range worst {
		if w.length() > 0 {
			rt.Worst = append(rt.Worst, w.describe(start))
		}
	}
	return rt
}

// tallyTruth adds the stopped load's readiness truth to res, with a
// violation for every stretch longer than ReadyWrongBound.
func (l *Load) tallyTruth(res *Result) {
	res.Truth = readyTruth(l.truths, l.start)
	for _, o := range res.Truth.Over {
		res.Violations = append(res.Violations, Violation(fmt.Sprintf("/readyz wrong for more than %v: %s", ReadyWrongBound, o)))
	}
}

// describe is the span for a run's line: "n2 said ready while it could not +7.3s for 1.42s".
func (w wrongSpan) describe(start time.Time) string {
	what := "said ready while it could not write or was stale"
	if w.kind == notReadyWhileCan {
		what = "said not ready while it could write and was fresh"
	}
	return fmt.Sprintf("%s %s +%.1fs for %.2fs", w.node, what, w.from.Sub(start).Seconds(), w.length().Seconds())
}

// writeProber submits 1 to its own member through its node alone every
// probeEvery, each with probeDeadline, and records the outcomes.
type writeProber struct {
	c   *rwclient.Client
	log *truthLog
}

func newWriteProber(n *Node, token string, log *truthLog) (*writeProber, error) {
	c, err := rwclient.New([]string{n.URL()}, rwclient.WithToken(token),
		rwclient.WithAttemptTimeouts(probeDeadline, probeDeadline))
	if err != nil {
		return nil, err
	}
	return &writeProber{c: c, log: log}, nil
}

// run probes until ctx ends and waits for its probes in flight; a probe
// cut by ctx's end is not recorded.
func (p *writeProber) run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	member := "probe-" + p.log.node
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		wg.Go(func() {
			sent := time.Now()
			pctx, cancel := context.WithTimeout(ctx, probeDeadline)
			defer cancel()
			_, err := p.c.Submit(pctx, Board, rwclient.Score{Member: member, Score: 1})
			if ctx.Err() != nil {
				return
			}
			o := probeOutcome{sent: sent}
			if err == nil {
				o.acked = time.Now()
			}
			p.log.addProbe(o)
		})
	}
}
