package hub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
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

// TestGroupCommitInFlight submits +1 to one member of a sum board from many
// goroutines, so that groups are in flight together (with fsync before
// every ack, the default): every call's result must be the member's score
// right after that call's own item in the stream's order, so the scores
// answered are exactly 1..N, each once, rising for every caller's
// successive calls, and the board ends at N.
func TestGroupCommitInFlight(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "b", Settings{Policy: "sum"})
	const callers, calls = 48, 15
	ctx := testCtx(t)
	scores := make([][]float64, callers)
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for c := range callers {
		wg.Go(func() {
			for i := range calls {
				res, err := h.Submit(ctx, "t1", "b", []Item{{Member: "shared", Score: 1}})
				if err != nil {
					errs <- fmt.Errorf("caller %d call %d: %w", c, i, err)
					return
				}
				scores[c] = append(scores[c], res[0].Score)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := make(map[float64]bool)
	for c, s := range scores {
		for i, v := range s {
			if v < 1 || v > callers*calls || v != float64(int(v)) || seen[v] {
				t.Fatalf("caller %d call %d answered score %v: not a fresh one of 1..%d", c, i, v, callers*calls)
			}
			seen[v] = true
			if i > 0 && v <= s[i-1] {
				t.Fatalf("caller %d: call %d answered %v after %v", c, i, v, s[i-1])
			}
		}
	}
	if p, _ := h.Member(Loc{Tenant: "t1", Board: "b"}, "shared"); p.Rows[0].Score != callers*calls {
		t.Fatalf("shared = %v, want %d", p.Rows[0].Score, callers*calls)
	}
	r := h.reg.lookup("t1")
	t.Logf("%d calls in %d events, at most %d in flight", callers*calls, r.applied.Load()-1, r.peak.Load())
	if r.peak.Load() != maxInFlight {
		t.Fatalf("at most %d group events in flight, want %d: the test did not overlap them", r.peak.Load(), maxInFlight)
	}
}

// TestGroupFailureIsOwn publishes two groups at once, one of which fails
// (its publish's context has ended, so nothing is sent): the failed group's
// calls get the error and nothing of theirs is applied; the other group's
// calls are answered from their own event, unaffected.
func TestGroupFailureIsOwn(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "b", Settings{Policy: "sum"})
	r := h.reg.lookup("t1")
	req := func(m string) *submitReq {
		return &submitReq{ctx: context.Background(), board: "b", items: []Item{{Member: m, Score: 1}, {Member: "shared", Score: 1}}, sent: make(chan ticket, 1)}
	}
	failed := []*submitReq{req("f1"), req("f2")}
	ok := []*submitReq{req("o1"), req("o2")}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	var wg sync.WaitGroup
	wg.Go(func() { h.streams.publishGroup(gone, r, failed) })
	wg.Go(func() { h.streams.publishGroup(testCtx(t), r, ok) })
	wg.Wait()
	for _, q := range failed {
		if tk := <-q.sent; tk.err == nil {
			t.Fatalf("call %s of the failed group got a ticket without error", q.items[0].Member)
		}
	}
	for i, q := range ok {
		tk := <-q.sent
		if tk.err != nil {
			t.Fatalf("call %s: %v", q.items[0].Member, tk.err)
		}
		if err := h.streams.awaitApply(testCtx(t), r, tk.f); err != nil {
			t.Fatal(err)
		}
		res := tk.f.out.Groups[tk.i].Results
		if res[0].Member != q.items[0].Member || res[1].Score != float64(i+1) {
			t.Fatalf("call %s answered %+v", q.items[0].Member, res)
		}
	}
	for _, m := range []string{"f1", "f2"} {
		if _, err := h.Member(Loc{Tenant: "t1", Board: "b"}, m); err == nil {
			t.Fatalf("member %s of the failed group is on the board", m)
		}
	}
}

// TestCommitterClose closes the Hub while callers keep groups in flight:
// every call returns, Close returns (the committer and the publishes it
// started have ended), and after a restart on the same directory every
// acknowledged call's item is there.
func TestCommitterClose(t *testing.T) {
	dir := t.TempDir()
	h, err := Start(testCtx(t), Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, h, "t1", "b", Settings{})
	ctx := testCtx(t)
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	for c := range 32 {
		wg.Go(func() {
			for i := 0; ; i++ {
				m := fmt.Sprintf("c%d-%d", c, i)
				if _, err := h.Submit(ctx, "t1", "b", []Item{{Member: m, Score: 1}}); err != nil {
					if !errors.Is(err, ErrClosed) && !errors.Is(err, ErrUnavailable) {
						t.Errorf("call %s: %v", m, err)
					}
					return
				}
				mu.Lock()
				acked = append(acked, m)
				mu.Unlock()
			}
		})
	}
	await.For(t, 10*time.Second, func() error {
		if p := h.reg.lookup("t1").peak.Load(); p < maxInFlight {
			return fmt.Errorf("at most %d group events in flight", p)
		}
		return nil
	})
	h.Close()
	wg.Wait()
	h = startHub(t, Config{DataDir: dir})
	for _, m := range acked {
		if _, err := h.Member(Loc{Tenant: "t1", Board: "b"}, m); err != nil {
			t.Fatalf("acknowledged %s lost over a restart: %v", m, err)
		}
	}
	t.Logf("%d acknowledged before Close, all there after", len(acked))
}
