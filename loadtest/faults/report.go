package faults

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Report writes a Markdown table, one row per fault in Faults' order with
// the runs of results: min/median/max over the runs of the longest write
// gap, the longest watcher silence and the healthy nodes' /readyz
// not-ready time, and of the readiness truth's two longest wrong stretches
// (ReadyTruth), with the healthy nodes' flaps summed; the acknowledged submissions, those lost and those
// applied twice summed; the runs with violations or errors.
func Report(w io.Writer, results []Result) {
	fmt.Fprintln(w, "| fault | runs | acknowledged | lost / twice | violations | failed runs | write gap min/med/max | watcher silence min/med/max | healthy /readyz not 200 min/med/max | oldest read while ready min/med/max | why healthy nodes were not 200 |"+
		" `/readyz` said ready while it could not (after a fault begins) min/med/max | said not ready while it could (after it ends) min/med/max | healthy flaps |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, f := range Faults {
		var rs []Result
		for _, r := range results {
			if r.Fault == f.Name {
				rs = append(rs, r)
			}
		}
		if len(rs) == 0 {
			continue
		}
		acked, lost, twice, viol, failed := 0, 0, 0, 0, 0
		var gaps, watch, ready, age []time.Duration
		var flaps [][]Flap
		var falseReady, falseNot []time.Duration
		healthyFlaps := 0
		for _, r := range rs {
			acked, lost, twice = acked+r.Acked, lost+r.Lost, twice+r.Twice
			viol += len(r.Violations)
			if r.Err != nil || len(r.Violations) > 0 {
				failed++
			}
			gaps, watch, ready = append(gaps, r.WriteGap), append(watch, r.WatchGap), append(ready, r.NotReady)
			age, flaps = append(age, r.WorstAge), append(flaps, r.Flaps)
			falseReady, falseNot = append(falseReady, r.Truth.ReadyWhileNot), append(falseNot, r.Truth.NotReadyWhileCan)
			healthyFlaps += r.Truth.HealthyFlaps
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d / %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %d |\n", f.Name, len(rs), acked, lost, twice, viol, failed,
			spread(gaps), spread(watch), spread(ready), spread(age), reasonSummary(flaps), spread(falseReady), spread(falseNot), healthyFlaps)
	}
}

// Detail writes one line per run with its violations and error.
func Detail(w io.Writer, r Result) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d acked, %d unresolved, %d lost, %d twice, write gap %v, watcher silence %v, healthy not ready %v, oldest read while ready %v",
		r.Fault, r.Acked, r.Unsure, r.Lost, r.Twice, r.WriteGap.Round(time.Millisecond), r.WatchGap.Round(time.Millisecond),
		r.NotReady.Round(time.Millisecond), r.WorstAge.Round(time.Millisecond))
	if r.FaultGap > 0 {
		fmt.Fprintf(&b, ", write gap during the fault %v", r.FaultGap.Round(time.Millisecond))
	}
	fmt.Fprintf(&b, ", /readyz said ready while it could not %v, not ready while it could %v, healthy flaps %d",
		r.Truth.ReadyWhileNot.Round(time.Millisecond), r.Truth.NotReadyWhileCan.Round(time.Millisecond), r.Truth.HealthyFlaps)
	for _, s := range r.Truth.Worst {
		fmt.Fprintf(&b, "; longest: %s", s)
	}
	for _, f := range r.Flaps {
		fmt.Fprintf(&b, "; healthy not 200: %s", f)
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "; NOTE %s", r.Note)
	}
	if r.WriteErr != nil {
		fmt.Fprintf(&b, "; first failed write: %v", r.WriteErr)
	}
	for _, k := range slices.Sorted(maps.Keys(r.WriteErrs)) {
		fmt.Fprintf(&b, "; failed writes %d× %s", r.WriteErrs[k], k)
	}
	if r.Agreed != "" {
		fmt.Fprintf(&b, "; every node served %s", r.Agreed)
	}
	if r.Err != nil {
		fmt.Fprintf(&b, "; ERROR %v", r.Err)
	}
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "; VIOLATION %s", v)
	}
	fmt.Fprintln(w, b.String())
	for _, line := range r.Timeline {
		fmt.Fprintln(w, "  "+line)
	}
}

// spread is "min / median / max" of ds in seconds.
func spread(ds []time.Duration) string {
	s := slices.Sorted(slices.Values(ds))
	f := func(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }
	return f(s[0]) + " / " + f(s[len(s)/2]) + " / " + f(s[len(s)-1]) + " s"
}
