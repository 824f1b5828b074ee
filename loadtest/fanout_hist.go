package loadtest

import (
	"math"
	"sync/atomic"
	"time"
)

// histBuckets and histGrowth shape Hist: bucket 0 holds durations under
// 1 µs, bucket i ≥ 1 those in [g^(i-1), g^i) µs with g = 1.02, so a
// percentile is exact to 2 %; the last bucket (g^1199 µs ≈ 5 h) takes the rest.
const (
	histBuckets = 1200
	histGrowth  = 1.02
)

// Hist is a latency histogram with 2 % resolution that can be filled from
// many goroutines at once (atomic adds, no lock) and merged across
// processes (it round-trips through JSON). Its zero value is not ready:
// use newHist.
type Hist struct {
	Counts []atomic.Uint64 `json:"-"`
	MaxUS  atomic.Int64    `json:"-"`
}

func newHist() *Hist { return &Hist{Counts: make([]atomic.Uint64, histBuckets)} }

// logGrowth is ln(histGrowth), computed once: math.Log of a constant is
// not folded at compile time, and Add runs for every row received.
var logGrowth = math.Log(histGrowth)

func histBucket(us int64) int {
	if us < 1 {
		return 0
	}
	return min(int(math.Log(float64(us))/logGrowth)+1, histBuckets-1)
}

// bucketUpper is the upper bound of bucket i in µs.
func bucketUpper(i int) float64 { return math.Pow(histGrowth, float64(i)) }

// Add records d. O(1), safe for concurrent use.
func (h *Hist) Add(d time.Duration) {
	us := d.Microseconds()
	h.Counts[histBucket(us)].Add(1)
	for m := h.MaxUS.Load(); us > m && !h.MaxUS.CompareAndSwap(m, us); m = h.MaxUS.Load() {
	}
}

// histWire is Hist on the wire between a worker and the coordinator.
type histWire struct {
	Counts map[int]uint64 `json:"counts"` // non-empty buckets only
	MaxUS  int64          `json:"max_us"`
}

func (h *Hist) wire() histWire {
	w := histWire{Counts: map[int]uint64{}, MaxUS: h.MaxUS.Load()}
	for i := range h.Counts {
		if n := h.Counts[i].Load(); n > 0 {
			w.Counts[i] = n
		}
	}
	return w
}

// merge adds w's counts into h. Not safe concurrently with Add.
func (h *Hist) merge(w histWire) {
	for i, n := range w.Counts {
		if i >= 0 && i < histBuckets {
			h.Counts[i].Add(n)
		}
	}
	if w.MaxUS > h.MaxUS.Load() {
		h.MaxUS.Store(w.MaxUS)
	}
}

// Latency summarises h the way summarize does raw samples; a percentile
// is its bucket's upper bound, capped at the maximum seen. O(buckets).
func (h *Hist) Latency() Latency {
	var total uint64
	for i := range h.Counts {
		total += h.Counts[i].Load()
	}
	max := time.Duration(h.MaxUS.Load()) * time.Microsecond
	q := func(p float64) time.Duration {
		if total == 0 {
			return 0
		}
		want := uint64(math.Ceil(p / 100 * float64(total)))
		var seen uint64
		for i := range h.Counts {
			if seen += h.Counts[i].Load(); seen >= max64(want, 1) {
				return min(time.Duration(bucketUpper(i)*float64(time.Microsecond)), max)
			}
		}
		return max
	}
	return Latency{Count: int(total), P50: q(50), P90: q(90), P99: q(99), P999: q(99.9), Max: max}
}

func max64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}
