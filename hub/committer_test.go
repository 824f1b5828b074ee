package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/internal/ledger"
)

// TestGroupCommit submits from many goroutines at once: every call gets its
// own results, the boards hold every item, and the calls share events.
func TestGroupCommit(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "a", Settings{})
	mustPut(t, h, "t1", "b", Settings{Policy: "sum"})
	const callers, calls = 32, 20
	ctx := testCtx(t)
	concurrently(t, callers, calls, func(c, i int) error {
		b := []string{"a", "b"}[(c+i)%2]
		m := fmt.Sprintf("c%d-%d", c, i)
		res, err := h.Submit(ctx, "t1", b, []Item{{Member: m, Score: float64(i)}, {Member: "shared", Score: 1}})
		if err == nil && (len(res) != 2 || res[0].Member != m || res[0].Rank < 1 || !res[0].Applied) {
			err = fmt.Errorf("caller %d call %d: results %+v", c, i, res)
		}
		return err
	})
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

// TestGatherLimits: the committer takes every call queued up to
// maxGroupItems and maxGroupBytes (its calls' own encodings, counted
// exactly); the call that would pass a limit waits for the next group, a
// canceled one gets its error, and an empty queue never makes gather wait.
func TestGatherLimits(t *testing.T) {
	r := newReplica("t1", ledger.New(), slog.New(slog.DiscardHandler), nil)
	call := func(ctx context.Context, n, pad int) *submitReq {
		items := make([]Item, n)
		for i := range items {
			items[i] = Item{Member: fmt.Sprintf("m%d%s", i, strings.Repeat("x", pad)), Score: 1}
		}
		enc, err := ledger.EncodeGroup(ledger.Group{Board: "b", Items: items})
		if err != nil {
			t.Fatal(err)
		}
		return &submitReq{ctx: ctx, items: items, enc: enc, sent: make(chan ticket, 1)}
	}
	ctx := context.Background()
	const per = 100
	for range maxGroupItems/per - 1 { // exactly a full group behind first
		r.queue <- call(ctx, per, 0)
	}
	reqs, next := gather(r, call(ctx, per, 0))
	if countItems(reqs) != maxGroupItems || next != nil {
		t.Fatalf("gathered %d items (next %v), want all %d", countItems(reqs), next != nil, maxGroupItems)
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	gone := call(canceled, 1, 0)
	r.queue <- gone
	for range maxGroupItems / per {
		r.queue <- call(ctx, per, 0)
	}
	reqs, next = gather(r, call(ctx, 1, 0))
	if items := countItems(reqs); next == nil || items > maxGroupItems || items+len(next.items) <= maxGroupItems {
		t.Fatalf("items limit: gathered %d items, next %v", items, next != nil)
	}
	if tk := <-gone.sent; !errors.Is(tk.err, context.Canceled) {
		t.Fatalf("canceled call's ticket: %+v", tk)
	}
	for len(r.queue) > 0 {
		<-r.queue
	}

	big := call(ctx, 400, 1000) // about 400 KB each: the third passes maxGroupBytes
	r.queue <- call(ctx, 400, 1000)
	r.queue <- call(ctx, 400, 1000)
	reqs, next = gather(r, big)
	if len(reqs) != 2 || next == nil {
		t.Fatalf("bytes limit: gathered %d calls of %d bytes each, next %v", len(reqs), len(big.enc), next != nil)
	}
}

// gather is the committer's take without waiting.
func gather(r *replica, first *submitReq) ([]*submitReq, *submitReq) {
	return r.collect([]*submitReq{first}, 0, nil)
}

func countItems(reqs []*submitReq) int {
	n := 0
	for _, q := range reqs {
		n += len(q.items)
	}
	return n
}
