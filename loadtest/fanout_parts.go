package loadtest

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// The parts of a submission's way to its watchers that the gateway
// measures itself, read from two scrapes of its /metrics (the measured
// phase's difference): with the writers' answer (the HTTP round trip as
// the client sees it) and the receive latency, they say which part makes
// a tail. Histogram bounds, so a quantile is its bucket's upper bound.
const (
	// partSubmit is the submission's HTTP request inside the server:
	// decode, authenticate, publish, wait for the apply, answer.
	partSubmit = `rankwire_http_request_duration_seconds_bucket{method="POST",route="/v1/boards/{board}/scores",le="`
	// partPublish is the publish to JetStream up to its ack: the group
	// commit and, with --sync always, the fsync.
	partPublish = `rankwire_publish_duration_seconds_bucket{le="`
	// partTick is one drain of the change feed: recompute, encode, offer.
	partTick = `rankwire_ws_push_tick_seconds_bucket{le="`
)

// PartStats is one measured part between two scrapes. A quantile is the
// upper bound of the histogram bucket it falls in; -1: above the largest.
type PartStats struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean_seconds"`
	P50   float64 `json:"p50_seconds"`
	P99   float64 `json:"p99_seconds"`
	Max   float64 `json:"max_bucket_seconds"`
}

// partsStats reads every part from two scrapes; absent parts are left out.
func partsStats(a, b metrics) map[string]PartStats {
	out := map[string]PartStats{}
	for name, prefix := range map[string]string{"submit_http": partSubmit, "publish": partPublish, "push_tick": partTick} {
		if p, ok := histStats(a, b, prefix); ok {
			out[name] = p
		}
	}
	return out
}

type bucket struct{ le, n float64 }

// histStats computes one histogram's figures between scrapes a and b;
// prefix is its bucket series up to the le label's value. False: the
// histogram is absent or counted nothing in between.
func histStats(a, b metrics, prefix string) (PartStats, bool) {
	var bs []bucket
	for k, v := range b {
		if le, ok := strings.CutPrefix(k, prefix); ok {
			if f, err := strconv.ParseFloat(strings.TrimSuffix(le, `"}`), 64); err == nil {
				bs = append(bs, bucket{f, v - a[k]})
			}
		}
	}
	if a == nil || len(bs) == 0 {
		return PartStats{}, false
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	n := bs[len(bs)-1].n // +Inf's: the count
	if n <= 0 {
		return PartStats{}, false
	}
	series := strings.TrimSuffix(prefix, `le="`)
	base, labels, _ := strings.Cut(series, "{")
	base = strings.TrimSuffix(base, "_bucket")
	labels = strings.TrimSuffix(labels, ",")
	sumKey := base + "_sum"
	if labels != "" {
		sumKey += "{" + labels + "}"
	}
	p := PartStats{Count: int(n), Mean: (b[sumKey] - a[sumKey]) / n}
	p.P50, p.P99, p.Max = quantileBound(bs, 0.5*n), quantileBound(bs, 0.99*n), quantileBound(bs, n)
	return p, true
}

// quantileBound is the upper bound of the first cumulative bucket holding
// at least k observations; -1 where that is +Inf (JSON has no +Inf).
func quantileBound(bs []bucket, k float64) float64 {
	for _, b := range bs {
		if b.n >= k {
			if math.IsInf(b.le, 1) {
				return -1
			}
			return b.le
		}
	}
	return -1
}
