package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestGroupCommit submits from many goroutines at once: every call gets its
// own results, the boards hold every item, and the calls share events.
func TestGroupCommit(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "a", Settings{})
	mustPut(t, h, "t1", "b", Settings{Policy: "sum"})
	const callers, calls = 32, 20
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for c := range callers {
		wg.Go(func() {
			for i := range calls {
				b := []string{"a", "b"}[(c+i)%2]
				m := fmt.Sprintf("c%d-%d", c, i)
				res, err := h.Submit(ctx, "t1", b, []Item{{Member: m, Score: float64(i)}, {Member: "shared", Score: 1}})
				if err == nil && (len(res) != 2 || res[0].Member != m || res[0].Rank < 1 || !res[0].Applied) {
					err = fmt.Errorf("caller %d call %d: results %+v", c, i, res)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	pa, _ := h.Top(Loc{Tenant: "t1", Board: "a"}, 0, nil, 0)
	pb, _ := h.Member(Loc{Tenant: "t1", Board: "b"}, "shared")
	if pa.Total+pb.Total != callers*calls+2 {
		t.Fatalf("members a %d + b %d, want %d", pa.Total, pb.Total, callers*calls+2)
	}
	if got := pb.Rows[0].Score; got != callers*calls/2 {
		t.Fatalf("shared on sum board = %v, want %d", got, callers*calls/2)
	}
	events := h.lookup("t1").applied.Load() - 2 // the two settings events
	t.Logf("%d calls in %d events", callers*calls, events)
	if events >= callers*calls {
		t.Fatalf("%d calls took %d events: no grouping", callers*calls, events)
	}
}

// TestApplyGroups applies one group-committed event: each group keeps its
// own results and error, and idempotency ids are seen across groups in
// order, as within one batch.
func TestApplyGroups(t *testing.T) {
	s := newState()
	s.apply(1, &event{Kind: evSettings, Board: "b", Settings: mustNormalize(t, Settings{Policy: "sum"})})
	out := s.apply(2, &event{Kind: evGroup, At: date(2026, 1, 1).UnixMilli(), Groups: []group{
		{Board: "b", Items: []Item{{Member: "x", Score: 2, ID: "i1"}, {Member: "x", Score: 2, ID: "i1"}}},
		{Board: "gone", Items: []Item{{Member: "y", Score: 1}}},
		{Board: "b", Items: []Item{{Member: "x", Score: 2, ID: "i1"}, {Member: "y", Score: 5}}},
	}})
	if len(out.groups) != 3 || out.err != nil {
		t.Fatalf("outcome %+v", out)
	}
	g0, g1, g2 := out.groups[0], out.groups[1], out.groups[2]
	if g0.err != nil || g0.results[0].Duplicate || !g0.results[1].Duplicate || g0.results[1].Score != 2 {
		t.Errorf("group 0 = %+v", g0)
	}
	if !errors.Is(g1.err, ErrNotFound) || g1.results != nil {
		t.Errorf("group 1 = %+v, want ErrNotFound", g1)
	}
	if g2.err != nil || !g2.results[0].Duplicate || g2.results[1].Rank != 1 || g2.results[1].Seq != 2 {
		t.Errorf("group 2 = %+v", g2)
	}
}

func mustNormalize(t *testing.T, s Settings) *Settings {
	t.Helper()
	n, err := s.normalize()
	if err != nil {
		t.Fatal(err)
	}
	return &n
}

// TestSubmitCanceled: a call whose context has ended fails with its
// context's error and leaves the committer serving the others.
func TestSubmitCanceled(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "b", Settings{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Submit(ctx, "t1", "b", []Item{{Member: "a", Score: 1}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res := mustSubmit(t, h, "t1", "b", Item{Member: "b", Score: 1}); res[0].Rank != 1 {
		t.Fatalf("after a canceled call: %+v", res)
	}
}

// TestApplySlices applies a large batch with a yield hook that plays the
// reader between slices: every pause falls after a whole item, and the
// feed's pending changes then agree with the board (last change's seq and
// total are the window's).
func TestApplySlices(t *testing.T) {
	s := newState()
	s.feed = newFeedLog()
	s.apply(1, &event{Kind: evSettings, Board: "b", Settings: mustNormalize(t, Settings{})})
	items := make([]Item, 300)
	for i := range items {
		items[i] = Item{Member: fmt.Sprintf("m%d", i), Score: float64(i)}
	}
	pauses := 0
	s.yield = func() {
		pauses++
		w := s.boards["b"].windows[windowKey{kindAll, 0}]
		for _, p := range s.feed.take() {
			last := p.changes[len(p.changes)-1]
			if last.Seq != w.seq || last.Total != w.b.Len() {
				t.Fatalf("pause %d: feed at seq %d total %d, window at %d, %d", pauses, last.Seq, last.Total, w.seq, w.b.Len())
			}
		}
		if err := w.b.Check(); err != nil {
			t.Fatal(err)
		}
	}
	out := s.apply(2, &event{Kind: evGroup, Groups: []group{{Board: "b", Items: items[:100]}, {Board: "b", Items: items[100:]}}})
	if want := len(items) / applySlice; pauses != want {
		t.Fatalf("%d pauses, want %d", pauses, want)
	}
	if r := out.groups[1].results[199]; r.Rank != 1 || r.Seq != 300 {
		t.Fatalf("last result %+v", r)
	}
}
