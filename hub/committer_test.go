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
	events := h.reg.lookup("t1").applied.Load() - 2 // the two settings events
	t.Logf("%d calls in %d events", callers*calls, events)
	if events >= callers*calls {
		t.Fatalf("%d calls took %d events: no grouping", callers*calls, events)
	}
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
