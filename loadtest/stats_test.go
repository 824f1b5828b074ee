package loadtest

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name    string
		samples []time.Duration
		q       float64
		want    time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one sample p50", ms(7), 50, 7 * time.Millisecond},
		{"one sample p99.9", ms(7), 99.9, 7 * time.Millisecond},
		{"two samples p50 is the lower", ms(1, 2), 50, 1 * time.Millisecond},
		{"two samples p51 is the upper", ms(1, 2), 51, 2 * time.Millisecond},
		{"median of odd count", ms(1, 2, 3, 4, 5), 50, 3 * time.Millisecond},
		{"1..100 p50", hundred, 50, 50 * time.Millisecond},
		{"1..100 p90", hundred, 90, 90 * time.Millisecond},
		{"1..100 p99", hundred, 99, 99 * time.Millisecond},
		{"1..100 p99.9 rounds up to max", hundred, 99.9, 100 * time.Millisecond},
		{"max", hundred, 100, 100 * time.Millisecond},
		{"tiny q is the min", hundred, 0.001, 1 * time.Millisecond},
		{"zero q is the min", hundred, 0, 1 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.samples, tt.q); got != tt.want {
				t.Errorf("Percentile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

func TestSummarizeSorts(t *testing.T) {
	l := summarize([]time.Duration{5, 1, 4, 2, 3})
	if l.Count != 5 || l.P50 != 3 || l.Max != 5 {
		t.Fatalf("summarize = %+v", l)
	}
}
