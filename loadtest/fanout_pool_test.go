package loadtest

import (
	"strings"
	"testing"
)

// TestLastAsFinal: a worker whose final report never came still counts
// what its last progress report counted (views received above all), is
// marked final, and says that its latencies are missing.
func TestLastAsFinal(t *testing.T) {
	w := &worker{last: workerReport{Connected: 8333, Connections: 8333, Viewed: 8333, Reconnects: 7, Gaps: 1}}
	r := w.lastAsFinal()
	if !r.Final || r.Viewed != 8333 || r.Connected != 8333 || r.Reconnects != 7 || r.Gaps != 1 {
		t.Errorf("lastAsFinal() = %+v, want the last report's counters, final", r)
	}
	if !strings.Contains(r.Err, "no final report") || !strings.Contains(r.Err, "no latencies") {
		t.Errorf("Err %q: want it to say the final report did not come and latencies are missing", r.Err)
	}
	var rep FanoutReport
	rep.final([]workerReport{r, {Final: true, Viewed: 8334}})
	if rep.Viewed != 16667 || len(rep.WorkerErrors) != 1 {
		t.Errorf("merged: viewed %d, worker errors %v; want 16667 and the one error", rep.Viewed, rep.WorkerErrors)
	}
}
