package loadtest

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestProbe runs the probe for 300 ms at 10 ms: both loops sample, the
// percentiles are ordered, a wake-up is never early, a round trip is never
// free, and the windows are printed.
func TestProbe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var progress bytes.Buffer
	dir := t.TempDir()
	r, err := Probe(ctx, ProbeConfig{Interval: 10 * time.Millisecond, Size: 100, Duration: 300 * time.Millisecond,
		SyncDir: dir, Window: 100 * time.Millisecond, Progress: &progress})
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	t.Log(r)
	if r.Sync == nil {
		t.Fatal("no fsync figures with a SyncDir")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the fsync loop left %d files behind", len(left))
	}
	for name, l := range map[string]Latency{"wake-up": r.Wake, "ping-pong": r.PingPong, "fsync": *r.Sync} {
		if l.Count == 0 || l.Count > 31 {
			t.Errorf("%s: %d samples in 300 ms at 10 ms, want 1…31", name, l.Count)
		}
		if l.P50 > l.P99 || l.P99 > l.Max || l.P50 < 0 {
			t.Errorf("%s: percentiles out of order: %+v", name, l)
		}
	}
	if r.PingPong.P50 <= 0 {
		t.Errorf("ping-pong p50 %v, want a positive round trip", r.PingPong.P50)
	}
	if len(r.Windows) == 0 || !strings.Contains(progress.String(), "wake-up overshoot") {
		t.Errorf("windows %d, progress %q: want at least one window printed", len(r.Windows), progress.String())
	}
	if r.Seconds < 0.3 {
		t.Errorf("ran %.3f s, want the 0.3 s asked", r.Seconds)
	}
}

// TestProbeRejectsConfig: an interval or size that is not positive is an
// error naming both, not a busy loop.
func TestProbeRejectsConfig(t *testing.T) {
	for _, cfg := range []ProbeConfig{{Interval: 0, Size: 100}, {Interval: time.Millisecond, Size: 0}} {
		if _, err := Probe(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "interval") {
			t.Errorf("Probe(%+v) = %v, want an error naming interval and size", cfg, err)
		}
	}
}

// TestProbeStopsWithContext: a probe without a duration ends when its
// context does, with what it measured so far.
func TestProbeStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	r, err := Probe(ctx, ProbeConfig{Interval: 5 * time.Millisecond, Size: 100})
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if r.Wake.Count == 0 || r.Seconds > 20 {
		t.Errorf("report %+v: want samples and an end soon after the context's", r)
	}
}
