package loadtest

import "testing"

// TestHistStats: the quantiles and the mean come from the difference of
// two scrapes, a bucket's upper bound standing for what falls in it.
func TestHistStats(t *testing.T) {
	const p = partSubmit
	a := metrics{p + `0.001"}`: 10, p + `0.005"}`: 10, p + `0.025"}`: 10, p + `+Inf"}`: 10,
		`rankwire_http_request_duration_seconds_sum{method="POST",route="/v1/boards/{board}/scores"}`: 1}
	b := metrics{p + `0.001"}`: 70, p + `0.005"}`: 108, p + `0.025"}`: 109, p + `+Inf"}`: 110,
		`rankwire_http_request_duration_seconds_sum{method="POST",route="/v1/boards/{board}/scores"}`: 1.5}
	got, ok := histStats(a, b, p)
	want := PartStats{Count: 100, Mean: 0.005, P50: 0.001, P99: 0.025, Max: -1}
	if !ok || got != want {
		t.Errorf("histStats = %+v, %v; want %+v", got, ok, want)
	}
	if _, ok := histStats(b, b, p); ok {
		t.Error("no observations in between, yet stats")
	}
	if parts := partsStats(a, b); len(parts) != 1 || parts["submit_http"] != want {
		t.Errorf("partsStats = %+v", parts)
	}
}
