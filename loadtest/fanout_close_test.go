package loadtest

import (
	"sync"
	"testing"
	"time"
)

// The close rate is shared over the workers: each closes its connections
// one every workers ÷ rate seconds.
func TestWorkerConfigsPaceTheCloses(t *testing.T) {
	c := FanoutConfig{Target: Target{URL: "http://127.0.0.1:8080"}, Subscribers: 30000, PerWorker: 9000, CloseRate: 10000}.withDefaults()
	wcs, err := c.workerConfigs()
	if err != nil {
		t.Fatal(err)
	}
	if len(wcs) != 4 {
		t.Fatalf("%d workers, want 4", len(wcs))
	}
	for _, wc := range wcs {
		if wc.CloseEvery != 400*time.Microsecond {
			t.Errorf("a worker closes one connection every %v, want 400µs", wc.CloseEvery)
		}
	}
	c.CloseRate = 0
	if wcs, _ = c.workerConfigs(); wcs[0].CloseEvery != 0 {
		t.Errorf("no close rate: one close every %v, want all at once", wcs[0].CloseEvery)
	}
}

// Concurrent waits leave one every interval: n closes take at least
// (n-1) intervals, and a pacer of no interval does not wait.
func TestClosePacerSpacesTheCloses(t *testing.T) {
	const n, every = 6, 20 * time.Millisecond
	p := &closePacer{every: every}
	t0 := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Go(p.wait)
	}
	wg.Wait()
	if took := time.Since(t0); took < (n-1)*every {
		t.Fatalf("%d closes in %v, want at least %v", n, took, (n-1)*every)
	}
	t0 = time.Now()
	var none *closePacer
	none.wait()
	(&closePacer{}).wait()
	if took := time.Since(t0); took > time.Second {
		t.Fatalf("an unpaced close waited %v", took)
	}
}
