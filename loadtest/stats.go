package loadtest

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Percentile returns the q-th percentile (0 < q ≤ 100) of sorted by the
// nearest-rank method: the smallest sample with at least q% of the samples
// at or below it. It returns 0 for no samples. O(1); sorted must be sorted
// ascending.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Latency summarises a set of latency samples.
type Latency struct {
	Count                    int
	P50, P90, P99, P999, Max time.Duration
}

// summarize sorts samples in place and summarises them.
func summarize(samples []time.Duration) Latency {
	slices.Sort(samples)
	return Latency{
		Count: len(samples),
		P50:   Percentile(samples, 50), P90: Percentile(samples, 90),
		P99: Percentile(samples, 99), P999: Percentile(samples, 99.9),
		Max: Percentile(samples, 100),
	}
}

func (l Latency) String() string {
	return fmt.Sprintf("n=%d p50=%v p90=%v p99=%v p99.9=%v max=%v",
		l.Count, round(l.P50), round(l.P90), round(l.P99), round(l.P999), round(l.Max))
}

func round(d time.Duration) time.Duration {
	if d >= 10*time.Millisecond {
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// recorder collects one goroutine's samples and error counts. Not safe for
// concurrent use: each worker owns one, and they are merged at the end.
type recorder struct {
	samples []time.Duration
	limit   int            // most samples kept; later ones are counted only
	errors  map[string]int // by HTTP status or error class
	ok      int            // successful requests
	items   int            // successful items (submissions or reads)
}

func newRecorder(limit int) *recorder {
	return &recorder{limit: limit, errors: map[string]int{}}
}

func (r *recorder) success(d time.Duration, items int) {
	r.ok++
	r.items += items
	if len(r.samples) < r.limit {
		r.samples = append(r.samples, d)
	}
}

func (r *recorder) fail(class string) { r.errors[class]++ }

// merge folds rs into one recorder.
func merge(rs []*recorder) *recorder {
	out := newRecorder(math.MaxInt)
	for _, r := range rs {
		out.samples = append(out.samples, r.samples...)
		out.ok += r.ok
		out.items += r.items
		for k, v := range r.errors {
			out.errors[k] += v
		}
	}
	return out
}

// errorList renders error counts sorted by class, or "none".
func errorList(errs map[string]int) string {
	if len(errs) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmp.Compare)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s×%d", k, errs[k])
	}
	return s
}
