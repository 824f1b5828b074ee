package hub

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// runLanes runs f(0) … f(n-1) on up to GOMAXPROCS goroutines and returns
// when all have returned: the scheduling of the ledger's lanes
// (internal/ledger/lanes.go: the boards of one group event applied at
// once), which may start no goroutine itself. The lanes are pulled one at
// a time, so a long lane does not wait behind a worker's other lanes.
// The goroutines belong to the call: none outlives it.
func runLanes(n int, f func(i int)) {
	var next atomic.Int32
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for j := int(next.Add(1)) - 1; j < n; j = int(next.Add(1)) - 1 {
				f(j)
			}
		})
	}
	wg.Wait()
}
