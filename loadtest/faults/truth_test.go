package faults

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// synthetic is a node's timeline for the readiness truth: every 100 ms
// from 0 to end a /readyz answer (ready says which), a read (stale says
// which reads were older than maxLag) and a write probe, acknowledged 20
// ms after it was sent while the node can write (can), or, where it
// cannot, at the moment it can again if that is within probeDeadline
// (the gateway holds a write over an election), else never.
type synthetic struct {
	end           time.Duration
	ready, counts func(time.Duration) bool // counts: nil means always counted
	can           func(time.Duration) bool
	stale         func(time.Duration) bool // nil means never
}

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func (s synthetic) log(node string) *truthLog {
	l := &truthLog{node: node}
	for d := time.Duration(0); d <= s.end; d += probeEvery {
		l.addReady(t0.Add(d), s.ready(d), s.counts == nil || s.counts(d))
		var age time.Duration
		if s.stale != nil && s.stale(d) {
			age = maxLag + time.Second
		}
		l.addRead(t0.Add(d), age)
		o := probeOutcome{sent: t0.Add(d)}
		for w := time.Duration(0); w <= probeDeadline; w += 10 * time.Millisecond {
			if s.can(d + w) {
				o.acked = t0.Add(d + w + 20*time.Millisecond)
				break
			}
		}
		l.addProbe(o)
	}
	return l
}

// between is true from a to b (seconds), b excluded.
func between(a, b float64) func(time.Duration) bool {
	return func(d time.Duration) bool { return d.Seconds() >= a && d.Seconds() < b }
}

func not(f func(time.Duration) bool) func(time.Duration) bool {
	return func(d time.Duration) bool { return !f(d) }
}

func always(time.Duration) bool { return true }

func never(time.Duration) bool { return false }

func TestReadyTruth(t *testing.T) {
	cut := between(2, 7) // the node cannot write from 2 s to 7 s
	cases := []struct {
		name             string
		s                synthetic
		whileNot, notCan time.Duration // the longest stretches, within 150 ms
		flaps            int
		over             int // stretches over ReadyWrongBound
	}{
		{name: "right: 503 1.5 s into the cut, 200 1 s after it ends",
			s:        synthetic{end: 12 * time.Second, ready: not(between(3.5, 8)), can: not(cut), counts: never},
			whileNot: 1500 * time.Millisecond, notCan: time.Second},
		{name: "ready 4 s into the cut",
			s:        synthetic{end: 12 * time.Second, ready: not(between(6, 8)), can: not(cut), counts: never},
			whileNot: 4 * time.Second, notCan: time.Second, over: 1},
		{name: "not ready 4 s after the cut ends",
			s:        synthetic{end: 14 * time.Second, ready: not(between(3, 11)), can: not(cut), counts: never},
			whileNot: time.Second, notCan: 4 * time.Second, over: 1},
		{name: "stale after the cut: ready once caught up is right",
			s: synthetic{end: 14 * time.Second, ready: not(between(3, 9.5)), can: not(cut),
				stale: between(5, 9), counts: never}, // 3 s behind from 5 s, caught up at 9 s
			whileNot: time.Second, notCan: 500 * time.Millisecond},
		{name: "ready while stale 3.5 s",
			s: synthetic{end: 14 * time.Second, ready: always, can: always,
				stale: between(5, 8.5)},
			whileNot: 3500 * time.Millisecond, over: 1},
		{name: "healthy through a 1.5 s election: writes held, not refused",
			s:        synthetic{end: 10 * time.Second, ready: always, can: not(between(3, 4.5))},
			whileNot: 0},
		{name: "healthy through a 2.6 s election: a stall past the deadline counts whole",
			// the probes sent from 3.0 to 3.5 s wait past probeDeadline: each
			// makes the node unwritable from its send for the deadline
			s:        synthetic{end: 10 * time.Second, ready: always, can: not(between(3, 5.6))},
			whileNot: 2500 * time.Millisecond},
		{name: "a healthy node flaps twice, flicker merged",
			s: synthetic{end: 10 * time.Second, can: always,
				ready: func(d time.Duration) bool { return !between(3, 3.5)(d) && !between(3.6, 4)(d) && !between(7, 7.3)(d) }},
			notCan: time.Second, flaps: 3},
		{name: "not counted while touched: no flap",
			s: synthetic{end: 10 * time.Second, can: always, ready: not(between(3, 3.5)),
				counts: not(between(2, 5))},
			notCan: 500 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rt := readyTruth([]*truthLog{c.s.log("n1")}, t0)
			near := func(got, want time.Duration) bool {
				return got >= want-150*time.Millisecond && got <= want+150*time.Millisecond
			}
			if !near(rt.ReadyWhileNot, c.whileNot) || !near(rt.NotReadyWhileCan, c.notCan) {
				t.Errorf("ready while not %v, not ready while can %v; want %v, %v (%q)", rt.ReadyWhileNot, rt.NotReadyWhileCan, c.whileNot, c.notCan, rt.Worst)
			}
			if rt.HealthyFlaps != c.flaps {
				t.Errorf("healthy flaps %d, want %d", rt.HealthyFlaps, c.flaps)
			}
			if len(rt.Over) != c.over {
				t.Errorf("over the bound: %q, want %d", rt.Over, c.over)
			}
			var res Result
			(&Load{truths: []*truthLog{c.s.log("n1")}, start: t0}).tallyTruth(&res)
			if len(res.Violations) != c.over {
				t.Errorf("violations %q, want %d", res.Violations, c.over)
			}
		})
	}
}

func TestReadyTruthMaxOverNodes(t *testing.T) {
	right := synthetic{end: 12 * time.Second, ready: not(between(3.5, 8)), can: not(between(2, 7))}
	late := synthetic{end: 12 * time.Second, ready: not(between(5.5, 8)), can: not(between(2, 7))}
	rt := readyTruth([]*truthLog{right.log("n1"), late.log("n2")}, t0)
	if rt.ReadyWhileNot < 3400*time.Millisecond || rt.ReadyWhileNot > 3600*time.Millisecond {
		t.Errorf("ready while not %v, want n2's 3.5 s", rt.ReadyWhileNot)
	}
	if len(rt.Over) != 1 || !strings.HasPrefix(rt.Over[0], "n2 said ready while it could not write or was stale +2.0s for 3.5") {
		t.Errorf("over %q, want n2's stretch from +2.0s", rt.Over)
	}
}

func TestWritable(t *testing.T) {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	got := writable([]probeOutcome{
		{sent: at(0), acked: at(20)},
		{sent: at(100)},                   // unanswered: false from 100 until the ack at 1500
		{sent: at(200)},                   // overlaps: false until the same ack
		{sent: at(1400), acked: at(1500)}, // the node could write at 1500
		{sent: at(3000)},                  // nothing after: false until 3000 + the deadline
	})
	want := []step{{at(20), true}, {at(100), false}, {at(200), false}, {at(1500), false}, {at(1500), true}, {at(1500), true},
		{at(3000), false}, {at(3000).Add(probeDeadline), true}}
	if len(got) != len(want) {
		t.Fatalf("writable = %v, want %v", got, want)
	}
	for i := range got {
		if !got[i].at.Equal(want[i].at) || got[i].ok != want[i].ok {
			t.Fatalf("writable[%d] = %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
	s := &series{s: got}
	for _, c := range []struct {
		ms   int
		want bool
	}{{50, true}, {150, false}, {1499, false}, {1500, true}, {2999, true}, {3000, false}, {4999, false}, {5000, true}} {
		if v, _ := s.at(at(c.ms)); v != c.want {
			t.Errorf("writable at %d ms = %v, want %v", c.ms, v, c.want)
		}
	}
}

func TestReportReadyTruth(t *testing.T) {
	var b bytes.Buffer
	Report(&b, []Result{
		{Fault: "kill9-leader", Truth: ReadyTruth{ReadyWhileNot: time.Second, NotReadyWhileCan: 2 * time.Second}},
		{Fault: "kill9-leader", Truth: ReadyTruth{ReadyWhileNot: 3 * time.Second, NotReadyWhileCan: 500 * time.Millisecond, HealthyFlaps: 1}},
	})
	if want := "| none | 1.00 / 3.00 / 3.00 s | 0.50 / 2.00 / 2.00 s | 1 |"; !strings.Contains(b.String(), want) {
		t.Errorf("Report:\n%s\nwant the row to end\n%s", b.String(), want)
	}
	b.Reset()
	Detail(&b, Result{Fault: "kill9-leader", Truth: ReadyTruth{ReadyWhileNot: time.Second, Worst: []string{"n1 said ready while it could not write or was stale +2.0s for 1.00s"}}})
	if want := "/readyz said ready while it could not 1s, not ready while it could 0s, healthy flaps 0; longest: n1 said ready"; !strings.Contains(b.String(), want) {
		t.Errorf("Detail = %q, want it to contain %q", b.String(), want)
	}
}
