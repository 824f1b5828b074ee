package faults

import (
	"testing"
	"time"
)

// notReady sums each node's non-200 stretches, the last one up to the end.
func TestReadyTrackNotReady(t *testing.T) {
	tr := &readyTrack{start: time.Now(), nodes: []string{"n2", "n3"}, changes: map[string][]readyChange{}}
	s := func(d float64) time.Duration { return time.Duration(d * float64(time.Second)) }
	tr.changes["n2"] = []readyChange{{0, true, ""}, {s(1), false, "cut off"}, {s(2.5), false, "no leader"}, {s(4), true, ""}, {s(5), false, "cut off"}}
	tr.changes["n3"] = []readyChange{{0, true, ""}}
	got, total := tr.notReady(s(6))
	if got != "n2 4.0s, n3 0.0s" || total != s(4) {
		t.Fatalf("notReady = %q, %v; want n2 4.0s, n3 0.0s, 4s", got, total)
	}
}
