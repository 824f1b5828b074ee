package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

// TestLingerLoneCaller: one caller submitting call after call under
// --sync always is never held back for more calls (its last event carried
// one call), so its latency does not grow.
func TestLingerLoneCaller(t *testing.T) {
	h := startHub(t, Config{})
	if h.streams.linger != maxLinger {
		t.Fatalf("linger under always = %v, want %v", h.streams.linger, maxLinger)
	}
	mustPut(t, h, "t1", "b", Settings{})
	for i := range 20 {
		mustSubmit(t, h, "t1", "b", Item{Member: fmt.Sprintf("m%d", i), Score: 1})
	}
	if n := h.reg.lookup("t1").lingers.Load(); n != 0 {
		t.Fatalf("a lone caller's events lingered %d times", n)
	}
}

// TestLingerGroupsMore: the same concurrent callers under --sync always
// share fewer events with the linger than without it.
func TestLingerGroupsMore(t *testing.T) {
	events := func(linger time.Duration) (uint64, uint64) {
		h := startHub(t, Config{})
		h.streams.linger = linger // before the tenant's committer starts
		mustPut(t, h, "t1", "b", Settings{})
		r := h.reg.lookup("t1")
		before := r.applied.Load()
		submitConcurrently(t, h, 32, 20)
		return r.applied.Load() - before, r.lingers.Load()
	}
	var with, without, lingered uint64
	for range 3 { // summed: one round on a loaded box varies
		e, n := events(0)
		if n != 0 {
			t.Fatalf("lingered %d times with a zero bound", n)
		}
		without += e
		e, n = events(maxLinger)
		with, lingered = with+e, lingered+n
	}
	t.Logf("3x640 calls: %d events without the linger, %d with it (%d lingered)", without, with, lingered)
	if lingered == 0 || with >= without {
		t.Fatalf("events with the linger %d (lingered %d), without %d: want fewer", with, lingered, without)
	}
}

// TestLingerLazy: under --sync lazy the committer never waits.
func TestLingerLazy(t *testing.T) {
	h := startHub(t, Config{Sync: SyncLazy})
	mustPut(t, h, "t1", "b", Settings{})
	submitConcurrently(t, h, 32, 10)
	if l, n := h.streams.linger, h.reg.lookup("t1").lingers.Load(); l != 0 || n != 0 {
		t.Fatalf("under lazy: bound %v, lingered %d times", l, n)
	}
}

func submitConcurrently(t *testing.T, h *Hub, callers, calls int) {
	t.Helper()
	ctx := testCtx(t)
	concurrently(t, callers, calls, func(c, i int) error {
		_, err := h.Submit(ctx, "t1", "b", []Item{{Member: fmt.Sprintf("c%d-%d", c, i), Score: 1}})
		return err
	})
}

// concurrently runs call(c, i) for calls i in turn on each of callers
// goroutines at once; a caller stops at its first error, and the test
// fails with every caller's error once all are done.
func concurrently(t *testing.T, callers, calls int, call func(c, i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for c := range callers {
		wg.Go(func() {
			for i := range calls {
				if err := call(c, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// TestCollectBound: collect waits for calls while the group is below its
// target, returns when the target is met or its timer fires (no call
// waits past it), and a call whose context ended meanwhile is answered.
func TestCollectBound(t *testing.T) {
	r := newReplica("t1", ledger.New(), slog.New(slog.DiscardHandler), nil)
	call := func(ctx context.Context) *submitReq {
		items := []Item{{Member: "m", Score: 1}}
		enc, err := ledger.EncodeGroup(ledger.Group{Board: "b", Items: items})
		if err != nil {
			t.Fatal(err)
		}
		return &submitReq{ctx: ctx, items: items, enc: enc, sent: make(chan ticket, 1)}
	}
	ctx := context.Background()
	type got struct {
		reqs []*submitReq
		next *submitReq
	}
	collect := func(reqs []*submitReq, want int, wait chan time.Time) chan got {
		out := make(chan got, 1)
		go func() {
			g, n := r.collect(reqs, want, wait)
			out <- got{live(g), n} // as the committer after its wait
		}()
		return out
	}

	// The target met: the call arriving later joins the group, no timer fires.
	out := collect([]*submitReq{call(ctx)}, 2, make(chan time.Time))
	r.queue <- call(ctx)
	if g := <-out; len(g.reqs) != 2 || g.next != nil {
		t.Fatalf("target 2: gathered %d calls", len(g.reqs))
	}

	// The timer fires first: collect returns what it has.
	canceled, cancel := context.WithCancel(ctx)
	gone := call(canceled)
	wait := make(chan time.Time, 1)
	out = collect([]*submitReq{call(ctx), gone}, 10, wait)
	cancel() // while lingering
	wait <- time.Now()
	if g := <-out; len(g.reqs) != 1 || g.reqs[0] == gone || g.next != nil {
		t.Fatalf("timer: gathered %d calls, want the live one of the 2 it had", len(g.reqs))
	}
	if tk := <-gone.sent; !errors.Is(tk.err, context.Canceled) {
		t.Fatalf("canceled call's ticket: %+v", tk)
	}

	// A group full of items below its target in calls: no call could join
	// it, so collect returns without waiting (this timer never fires).
	full := call(ctx)
	full.items = make([]Item, maxGroupItems)
	out = collect([]*submitReq{full}, 2, make(chan time.Time))
	select {
	case g := <-out:
		if len(g.reqs) != 1 || g.next != nil {
			t.Fatalf("full group: gathered %d calls", len(g.reqs))
		}
	case <-time.After(10 * time.Second): // a bound, not a pace: it returns at once
		t.Fatal("collect waited for calls a full group cannot take")
	}
}

// TestLingerAfterBurst: once a burst ends, a caller left alone waits for
// more calls at most once (its first event follows one that carried many),
// then never again: the rule holds for the event it publishes, not only
// for a caller alone from the start.
func TestLingerAfterBurst(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "b", Settings{})
	r := h.reg.lookup("t1")
	burstLingered := 0
	for round := range 3 {
		submitConcurrently(t, h, 64, 1) // all at once: the last events carry many calls
		before := r.lingers.Load()
		for i := range 10 {
			mustSubmit(t, h, "t1", "b", Item{Member: fmt.Sprintf("r%d-%d", round, i), Score: 1})
		}
		switch n := r.lingers.Load() - before; n {
		case 0:
		case 1:
			burstLingered++
		default:
			t.Fatalf("round %d: 10 sequential calls after a burst lingered %d times, want at most once", round, n)
		}
	}
	t.Logf("the first call after a burst lingered in %d of 3 rounds", burstLingered)
}

// TestCommitterDropsCanceledFirst: a call whose context ended while it
// was queued is answered with its context's error and not published, even
// when it is the first the committer takes (collect checks only the calls
// it takes itself).
func TestCommitterDropsCanceledFirst(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "b", Settings{})
	r := h.reg.lookup("t1")
	before := r.applied.Load()
	items := []Item{{Member: "gone", Score: 1}}
	enc, err := ledger.EncodeGroup(ledger.Group{Board: "b", Items: items})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gone := &submitReq{ctx: ctx, items: items, enc: enc, sent: make(chan ticket, 1)}
	r.queue <- gone // the committer is idle: gone is the first it takes
	if tk := <-gone.sent; !errors.Is(tk.err, context.Canceled) {
		t.Fatalf("canceled first call's ticket: %+v", tk)
	}
	mustSubmit(t, h, "t1", "b", Item{Member: "kept", Score: 1})
	if n := r.applied.Load() - before; n != 1 {
		t.Fatalf("%d events applied, want 1: the canceled call's was published", n)
	}
}
