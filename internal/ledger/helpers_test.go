package ledger

import (
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// goLanes runs the lanes of an event on goroutines, as the hub does
// (SetLanes): tests and benchmarks run them at once, under -race.
func goLanes(n int, f func(i int)) {
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

// buildState returns a state with board s of n members, applied in
// batches of 1,000 as the hub's BenchmarkRestart submits them. Benchmarks
// and tests share it.
func buildState(n int) *State {
	st := New()
	set, _ := Settings{}.normalize()
	st.Apply(1, &Event{Kind: EvSettings, Board: "s", Settings: &set})
	items := make([]Item, 0, MaxBatch)
	for i := 0; i < n; i += MaxBatch {
		items = items[:0]
		for m := i; m < min(i+MaxBatch, n); m++ {
			items = append(items, Item{Member: "m" + strconv.Itoa(m), Score: float64((m * 7919) % 1_000_003)})
		}
		st.Apply(uint64(2+i/MaxBatch), &Event{Kind: EvSubmit, Board: "s", Items: items})
	}
	return st
}

// TestWindowReserve: a growing window reserves room ahead of its board and
// the board stays valid across the reservations.
func TestWindowReserve(t *testing.T) {
	st := buildState(10_000)
	w := st.boards["s"].windows[windowKey{kindAll, 0}]
	if w.b.Len() != 10_000 || w.room < w.b.Len() {
		t.Fatalf("len %d, room %d", w.b.Len(), w.room)
	}
	if err := w.b.Check(); err != nil {
		t.Fatal(err)
	}
}

// reencoded encodes st as a snapshot without a keyring and decodes it
// back, failing t on an error: it returns the decoded state and the
// snapshot's bytes.
func reencoded(t *testing.T, st *State) (*State, []byte) {
	t.Helper()
	data, err := st.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return back, data
}
