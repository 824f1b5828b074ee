package natsstats

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// Publish calls land in the first bucket whose bound they do not pass,
// counted cumulatively as Prometheus histograms are, with the failures
// and the latency sum; a call slower than every bound counts in none.
func TestObservePublish(t *testing.T) {
	var c Counters
	for _, d := range []time.Duration{time.Millisecond, 3 * time.Millisecond, 2 * time.Second, 2 * time.Minute} {
		c.ObservePublish(d, nil)
	}
	c.ObservePublish(time.Millisecond, errors.New("no"))
	c.Retries.Add(2)
	s := c.Snapshot(true)
	if !s.Connected || s.Publishes != 5 || s.PublishErrors != 1 || s.Retries != 2 {
		t.Fatalf("snapshot %+v", s)
	}
	if want := 2*time.Millisecond + 3*time.Millisecond + 2*time.Second + 2*time.Minute; s.LatencySum != want {
		t.Fatalf("latency sum %v, want %v", s.LatencySum, want)
	}
	// Bounds: 0.001, 0.0025, 0.005, ... 1, 2.5, ...: the 1 ms calls in the
	// first, 3 ms in the third, 2 s at 2.5, 2 min above all.
	want := []uint64{2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4}
	if fmt.Sprint(s.LatencyCounts) != fmt.Sprint(want) {
		t.Fatalf("counts %v, want %v", s.LatencyCounts, want)
	}
}
