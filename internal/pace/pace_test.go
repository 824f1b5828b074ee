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
		if got := Next(t0, t0.Add(tc.busy), tc.interval).Sub(t0); got != tc.want {
			t.Errorf("%s: next after %v, want %v", tc.name, got, tc.want)
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
