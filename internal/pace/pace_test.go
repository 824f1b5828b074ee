package pace

import (
	"context"
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		busy     time.Duration // the drain ran from t0 to t0+busy
		interval time.Duration
		want     time.Duration // Next - t0
	}{
		{"idle: the least gap", 0, 100 * ms, MinGap},
		{"busy: a pause as long", 10 * ms, 100 * ms, 20 * ms},
		{"pause capped at the interval", 70 * ms, 100 * ms, 100 * ms},
		{"drain past the interval: the least gap", 150 * ms, 100 * ms, 151 * ms},
		{"interval shorter than the gap", 0, 0, MinGap},
	} {
		if got := Next(t0, t0.Add(tc.busy), tc.busy, tc.interval).Sub(t0); got != tc.want {
			t.Errorf("%s: next after %v, want %v", tc.name, got, tc.want)
		}
	}
	// A drain busy for only part of its wall time: the drain and its
	// pause together are at most half busy.
	for _, tc := range []struct {
		name       string
		wall, busy time.Duration
		want       time.Duration // Next - t0
	}{
		{"busy 5 ms of 60: rested enough, the least gap", 60 * ms, 5 * ms, 61 * ms},
		{"busy 30 ms of 60: half busy already, the least gap", 60 * ms, 30 * ms, 61 * ms},
		{"busy 40 ms of 60: 20 ms more", 60 * ms, 40 * ms, 80 * ms},
		{"busy 60 ms of 60: as long again", 60 * ms, 60 * ms, 120 * ms},
	} {
		if got := Next(t0, t0.Add(tc.wall), tc.busy, 200*ms).Sub(t0); got != tc.want {
			t.Errorf("%s: next after %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestBusyFollowsCPU: a drain that waits (sleeps) counts as busy for far
// less than its wall time; one that computes counts as busy for at least
// the CPU it used; one of at most MinGap counts as its wall time.
func TestBusyFollowsCPU(t *testing.T) {
	const span = 40 * time.Millisecond
	m := Start()
	time.Sleep(span)
	end := time.Now()
	if busy := m.Busy(end); busy > span/2 {
		t.Errorf("a sleeping drain of %v counted busy for %v, want under %v", end.Sub(m.Time()), busy, span/2)
	}

	m = Start()
	spinCPU(t, span)
	// Busy is capped at the wall time, and the process's CPU includes its
	// other threads (the runtime's, in parallel): a spin of span may end a
	// hair under span of wall time. A tenth below span is still far from a
	// sleeping drain's count.
	if busy := m.Busy(time.Now()); busy < span*9/10 {
		t.Errorf("a drain that used %v of CPU counted busy for %v", span, busy)
	}

	m = Start()
	if end := m.Time().Add(MinGap); m.Busy(end) != MinGap {
		t.Errorf("a drain of MinGap counted busy for %v, want its wall time", m.Busy(end))
	}
}

// spinCPU computes until the process has used d more CPU time.
func spinCPU(t *testing.T, d time.Duration) {
	t.Helper()
	from, ok := processCPU()
	if !ok {
		t.Skip("no process CPU clock here")
	}
	for {
		if now, _ := processCPU(); now-from >= d {
			return
		}
	}
}

func TestSleepUntil(t *testing.T) {
	if !SleepUntil(t.Context(), time.Now().Add(-time.Second)) {
		t.Error("a past time did not return at once with true")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if SleepUntil(ctx, time.Now().Add(time.Hour)) || SleepUntil(ctx, time.Now().Add(-time.Second)) {
		t.Error("an ended context returned true")
	}
	start := time.Now()
	if !SleepUntil(t.Context(), start.Add(5*time.Millisecond)) || time.Since(start) < 5*time.Millisecond {
		t.Error("returned before the time")
	}
}
