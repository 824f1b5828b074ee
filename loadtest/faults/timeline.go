package faults

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// timeline is a run's node events (a stop signalled, an exit, a start, a
// readiness seen), for placing a write gap among them. Safe for
// concurrent use.
type timeline struct {
	mu     sync.Mutex // guards events
	events []nodeEvent
}

// nodeEvent is one thing the suite did to a node or saw of it.
type nodeEvent struct {
	at   time.Time
	node string
	what string // "SIGTERM", "exited", "started", "ready"
}

// mark records that what happened to node n now.
func (tl *timeline) mark(n *Node, what string) {
	if tl == nil {
		return
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.events = append(tl.events, nodeEvent{time.Now(), n.Name, what})
}

// snapshot returns the events so far, in order.
func (tl *timeline) snapshot() []nodeEvent {
	if tl == nil {
		return nil
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return slices.Clone(tl.events)
}

// reqTrace is an http.RoundTripper that keeps a writer's requests since
// its last acknowledgement, so that a gap's requests can be told. Safe for
// concurrent use: a call's attempts overlap (the SDK's late flight).
type reqTrace struct {
	next http.RoundTripper
	mu   sync.Mutex // guards reqs
	reqs []*tracedReq
}

// tracedReq is one request and how it ended (zero end: in flight).
type tracedReq struct {
	start, end time.Time
	host       string
	outcome    string
}

func (rt *reqTrace) RoundTrip(r *http.Request) (*http.Response, error) {
	tr := &tracedReq{start: time.Now(), host: r.URL.Host}
	rt.mu.Lock()
	rt.reqs = append(rt.reqs, tr)
	rt.mu.Unlock()
	resp, err := rt.next.RoundTrip(r)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	tr.end = time.Now()
	if err != nil {
		tr.outcome = err.Error()
	} else {
		tr.outcome = resp.Status
	}
	return resp, err
}

// cut returns a copy of the requests that overlap from..to and forgets
// those that ended before to: the writer's next gap starts at to.
func (rt *reqTrace) cut(from, to time.Time) []tracedReq {
	if rt == nil {
		return nil
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var out []tracedReq
	kept := rt.reqs[:0]
	for _, r := range rt.reqs {
		if r.end.IsZero() || !r.end.Before(from) {
			out = append(out, *r)
		}
		if r.end.IsZero() || !r.end.Before(to) {
			kept = append(kept, r)
		}
	}
	clear(rt.reqs[len(kept):])
	rt.reqs = kept
	return out
}

// gapTrace is one gap of a writer between two acknowledgements and its
// requests meanwhile.
type gapTrace struct {
	writer   string
	from, to time.Time
	reqs     []tracedReq
}

func (g gapTrace) length() time.Duration { return g.to.Sub(g.from) }

// traceSlowest is how long a gap must be for the run's report to place it
// on the timeline: the planned restart's target.
const traceSlowest = 100 * time.Millisecond

// maxTracedGaps bounds the gaps a writer keeps for the timeline (the
// longest is kept apart): a machine that starves the suite makes many.
const maxTracedGaps = 32

// episode is the gaps over traceSlowest of several writers that overlap:
// one cause, felt by every writer that had a request in flight.
type episode struct {
	from, to time.Time
	gaps     []gapTrace
}

// episodes merges overlapping gaps, in order of their start.
func episodes(gaps []gapTrace) []episode {
	gaps = slices.Clone(gaps)
	slices.SortFunc(gaps, func(a, b gapTrace) int { return a.from.Compare(b.from) })
	var out []episode
	for _, g := range gaps {
		if k := len(out) - 1; k >= 0 && g.from.Before(out[k].to) {
			out[k].gaps = append(out[k].gaps, g)
			if g.to.After(out[k].to) {
				out[k].to = g.to
			}
			continue
		}
		out = append(out, episode{from: g.from, to: g.to, gaps: []gapTrace{g}})
	}
	return out
}

// describeGaps places the writers' gaps over traceSlowest among the node
// events, one episode of overlapping gaps at a time: when it began
// relative to each node's latest event, how long the suite's own process
// stalled meanwhile (the machine's share: stalls), and what the requests
// of its longest gap got. Times are seconds from the first event, with the
// episode's wall clock time for the nodes' logs.
func describeGaps(events []nodeEvent, gaps []gapTrace, stalls []span) []string {
	gaps = slices.DeleteFunc(slices.Clone(gaps), func(g gapTrace) bool { return g.length() <= traceSlowest })
	if len(gaps) == 0 {
		return nil
	}
	zero := gaps[0].from
	if len(events) > 0 {
		zero = events[0].at
	}
	rel := func(t time.Time) string { return fmt.Sprintf("%.3f", t.Sub(zero).Seconds()) }
	var ev []string
	for _, e := range events {
		ev = append(ev, e.node+" "+e.what+" "+rel(e.at))
	}
	out := []string{"timeline (s): " + strings.Join(ev, ", ")}
	for _, e := range episodes(gaps) {
		longest := slices.MaxFunc(e.gaps, func(a, b gapTrace) int { return cmpDur(a.length(), b.length()) })
		out = append(out, fmt.Sprintf("gap %v (%d writers' gaps over %v, %s's longest) from %s to %s (%s UTC); %s; the suite stalled %v meanwhile",
			longest.length().Round(time.Millisecond), len(e.gaps), traceSlowest, longest.writer, rel(e.from), rel(e.to),
			e.from.UTC().Format("15:04:05.000"), sinceEach(events, e.from)+within(events, e.from, e.to),
			stalled(stalls, e.from, e.to).Round(time.Millisecond)))
		for _, r := range longest.reqs {
			end := "in flight"
			if !r.end.IsZero() {
				end = rel(r.end)
			}
			out = append(out, fmt.Sprintf("  %s..%s %s: %s", rel(r.start), end, r.host, r.outcome))
		}
	}
	return out
}

// within names the node events from..to, each with how far into it: a
// gap that begins a moment before a stop (the writer's last answer came
// just before) is that stop's.
func within(events []nodeEvent, from, to time.Time) string {
	var out []string
	for _, e := range events {
		if e.at.After(from) && e.at.Before(to) {
			out = append(out, fmt.Sprintf("%s %s %v into it", e.node, e.what, e.at.Sub(from).Round(time.Millisecond)))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; during it " + strings.Join(out, ", ")
}

// sinceEach says, per node, how long before t its latest event was.
func sinceEach(events []nodeEvent, t time.Time) string {
	var nodes []string
	latest := map[string]nodeEvent{}
	for _, e := range events {
		if e.at.After(t) {
			continue
		}
		if _, ok := latest[e.node]; !ok {
			nodes = append(nodes, e.node)
		}
		latest[e.node] = e
	}
	if len(nodes) == 0 {
		return "before every node event"
	}
	var out []string
	for _, n := range nodes {
		e := latest[n]
		out = append(out, fmt.Sprintf("%v after %s %s", t.Sub(e.at).Round(time.Millisecond), n, e.what))
	}
	return "began " + strings.Join(out, ", ")
}

// slowGaps returns every writer's gaps over traceSlowest with their
// requests; call it after Stop.
func (l *Load) slowGaps() []gapTrace {
	var out []gapTrace
	for _, w := range l.writers {
		out = append(out, w.slow...)
		if w.longest.length() > traceSlowest && !slices.ContainsFunc(w.slow, func(g gapTrace) bool { return g.from.Equal(w.longest.from) }) {
			out = append(out, w.longest)
		}
	}
	return out
}

// span is a stretch of time.
type span struct{ from, to time.Time }

// stallTick is the stall meter's tick, stallLate how late a tick must be
// to count as a stall of the suite's own process.
const (
	stallTick = 5 * time.Millisecond
	stallLate = 30 * time.Millisecond
)

// stallMeter notes the stretches in which the suite's own process did not
// run (a tick of stallTick arriving stallLate or more after the last): a
// write gap that the suite stalled through is the machine's as much as
// the cluster's. Its spans are its goroutine's until that ends.
type stallMeter struct {
	stalls []span
}

// run ticks until ctx ends.
func (m *stallMeter) run(ctx context.Context) {
	t := time.NewTicker(stallTick)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		if now.Sub(last) >= stallLate {
			m.stalls = append(m.stalls, span{last, now})
		}
		last = now
	}
}

// stalled sums the stalls' overlap with from..to.
func stalled(stalls []span, from, to time.Time) time.Duration {
	var d time.Duration
	for _, s := range stalls {
		a, b := s.from, s.to
		if a.Before(from) {
			a = from
		}
		if b.After(to) {
			b = to
		}
		if b.After(a) {
			d += b.Sub(a)
		}
	}
	return d
}

func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// gapDuring returns the longest gap between two acknowledgements of a
// writer that overlapped the span of events (the first node event to the
// last: a rolling restart's first SIGTERM to its last node ready), 0
// without events. The run's WriteGap also counts the load before and
// after, where a gap is the machine's alone. Call it after Stop.
func (l *Load) gapDuring(events []nodeEvent) time.Duration {
	if len(events) == 0 {
		return 0
	}
	from, to := events[0].at, events[len(events)-1].at
	var longest time.Duration
	for _, w := range l.writers {
		prev := l.start
		for _, at := range w.acks {
			if at.After(from) && prev.Before(to) {
				longest = max(longest, at.Sub(prev))
			}
			prev = at
		}
	}
	return longest
}
