package hub

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// recordFeed keeps every batch it is given, with what the Window showed.
type recordFeed struct {
	mu      sync.Mutex
	batches []FeedBatch
	seqs    []uint64
	flushes int
}

func (f *recordFeed) Apply(b FeedBatch, w Window) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches = append(f.batches, b)
	f.seqs = append(f.seqs, w.Seq())
}

func (f *recordFeed) Flush() {
	f.mu.Lock()
	f.flushes++
	f.mu.Unlock()
}

func (f *recordFeed) changes(board, window string) (n int, reset bool, lastSeq uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, b := range f.batches {
		if b.Board == board && b.Window == window {
			n += len(b.Changes)
			reset = reset || b.Reset
			lastSeq = f.seqs[i]
		}
	}
	return n, reset, lastSeq
}

func TestFeedCarriesChanges(t *testing.T) {
	clk := newClock(date(2026, 1, 7))
	h := startHub(t, Config{Now: clk.now, PushInterval: 5 * time.Millisecond})
	f := &recordFeed{}
	h.SetFeed(f)
	mustPut(t, h, "t1", "b", Settings{Windows: []string{"all", "week"}})
	for i := range 3 {
		if _, err := h.Submit(testCtx(t), "t1", "b", []Item{{Member: fmt.Sprint("p", i), Score: float64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, win := range []string{"all", "week:2026-01-05"} {
		checkFor(t, 5*time.Second, func() error {
			if n, _, seq := f.changes("b", win); n != 3 || seq != 3 {
				return fmt.Errorf("%s: %d changes up to seq %d, want 3 and 3", win, n, seq)
			}
			return nil
		})
	}
	if err := h.Reset(testCtx(t), "t1", "b"); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 5*time.Second, func() error {
		if _, reset, _ := f.changes("b", "all"); !reset {
			return fmt.Errorf("no reset batch")
		}
		return nil
	})
	err := h.ReadWindow(Loc{Tenant: "t1", Board: "b", Window: "week"}, func(w Window) error {
		if w.Key() != "week:2026-01-05" || w.Board().Len() != 3 {
			return fmt.Errorf("window %s with %d entries", w.Key(), w.Board().Len())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
