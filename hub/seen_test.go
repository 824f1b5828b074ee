package hub

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Ids are kept for the retention the events carry, counted from the
// events' acceptance times: a repeat within it answers as the original,
// one after it applies again; a node replaying the same stream keeps and
// forgets the same ids (same fingerprint); without a retention an id is
// kept for ever.
func TestIdempotencyRetention(t *testing.T) {
	url := startNATS(t)
	clk := newClock(date(2026, 3, 2))
	a := startHub(t, Config{Now: clk.now, NATSURL: url, IdempotencyRetention: 2 * time.Hour})
	mustPut(t, a, "t1", "b", Settings{Policy: "sum"})
	sub := func(id string) Result {
		t.Helper()
		return mustSubmit(t, a, "t1", "b", Item{Member: "p1", Score: 1, ID: id})[0]
	}
	if r := sub("x"); r.Duplicate || r.Score != 1 {
		t.Fatalf("first: %+v", r)
	}
	clk.set(date(2026, 3, 2).Add(90 * time.Minute))
	if r := sub("x"); !r.Duplicate || r.Score != 1 {
		t.Fatalf("a repeat within the retention: %+v, want the original", r)
	}
	clk.set(date(2026, 3, 2).Add(3 * time.Hour))
	if r := sub("x"); r.Duplicate || r.Score != 2 {
		t.Fatalf("a repeat after the retention: %+v, want applied again", r)
	}
	if r := sub("x"); !r.Duplicate || r.Score != 2 {
		t.Fatalf("and then kept again: %+v", r)
	}
	b := startHub(t, Config{Now: clk.now, NATSURL: url, DiscoverInterval: -1})
	if _, err := b.replica(testCtx(t), "t1", false); err != nil {
		t.Fatal(err)
	}
	if string(fingerprint(t, a, "t1")) != string(fingerprint(t, b, "t1")) {
		t.Fatal("a node replaying the stream kept other ids")
	}

	c := startHub(t, Config{Now: clk.now}) // no retention
	mustPut(t, c, "t1", "b", Settings{Policy: "sum"})
	mustSubmit(t, c, "t1", "b", Item{Member: "p1", Score: 1, ID: "y"})
	clk.set(date(2027, 3, 2))
	if r := mustSubmit(t, c, "t1", "b", Item{Member: "p1", Score: 1, ID: "y"})[0]; !r.Duplicate {
		t.Fatalf("without a retention, a repeat a year later: %+v", r)
	}
}

// A submission that could take the tenant past the most member ids a
// board ranks is refused at ingest, naming member; one within it is
// applied.
func TestMemberLimitAtIngest(t *testing.T) {
	old := maxMembers
	maxMembers = 3
	t.Cleanup(func() { maxMembers = old })
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "b", Settings{})
	mustSubmit(t, h, "t1", "b", Item{Member: "p1", Score: 1}, Item{Member: "p2", Score: 2})
	_, err := h.Submit(testCtx(t), "t1", "b", []Item{{Member: "p3", Score: 3}, {Member: "p4", Score: 4}})
	var he *Error
	if !errors.As(err, &he) || !errors.Is(err, ErrLimit) || !strings.HasPrefix(he.Msg, "member: ") {
		t.Fatalf("err = %v, want a limit naming member", err)
	}
	mustSubmit(t, h, "t1", "b", Item{Member: "p3", Score: 3})
	if got := top(t, h, Loc{Tenant: "t1", Board: "b"}); len(got) != 3 {
		t.Fatalf("board %v", got)
	}
}
