package faults

import (
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

// gapTrace is a writer's longest gap and its requests.
type gapTrace struct {
	writer   string
	from, to time.Time
	reqs     []tracedReq
}

// traceSlowest is how long a gap must be for the run's report to place it
// on the timeline: the planned restart's target.
const traceSlowest = 100 * time.Millisecond

// describeGaps places each gap over traceSlowest among the node events,
// the longest first: when it began relative to each node's latest event,
// and what the writer's requests got meanwhile. Times are seconds from
// the first event, with the gap's wall clock time for the nodes' logs.
func describeGaps(events []nodeEvent, gaps []gapTrace) []string {
	gaps = slices.DeleteFunc(slices.Clone(gaps), func(g gapTrace) bool { return g.to.Sub(g.from) <= traceSlowest })
	if len(gaps) == 0 {
		return nil
	}
	slices.SortFunc(gaps, func(a, b gapTrace) int { return cmpDur(b.to.Sub(b.from), a.to.Sub(a.from)) })
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
	for _, g := range gaps {
		out = append(out, fmt.Sprintf("gap %v of %s from %s to %s (%s UTC); %s",
			g.to.Sub(g.from).Round(time.Millisecond), g.writer, rel(g.from), rel(g.to),
			g.from.UTC().Format("15:04:05.000"), sinceEach(events, g.from)))
		for _, r := range g.reqs {
			end := "in flight"
			if !r.end.IsZero() {
				end = rel(r.end)
			}
			out = append(out, fmt.Sprintf("  %s..%s %s: %s", rel(r.start), end, r.host, r.outcome))
		}
	}
	return out
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

// longestGaps returns each writer's longest gap with its requests; call
// it after Stop.
func (l *Load) longestGaps() []gapTrace {
	var out []gapTrace
	for _, w := range l.writers {
		if !w.longest.to.IsZero() {
			out = append(out, w.longest)
		}
	}
	return out
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
