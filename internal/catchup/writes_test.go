package catchup_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
)

// boardWrites are the writes to an existing board, each with its body: a
// submission, a batch, the admin actions and the disputes.
var boardWrites = []struct{ method, path, body string }{
	{"POST", "/scores", `{"member":"m1","score":5,"id":"w1"}`},
	{"POST", "/scores", `{"scores":[{"member":"m1","score":5,"id":"w2"},{"member":"m2","score":6,"id":"w3"}]}`},
	{"DELETE", "", ""},
	{"POST", "/reset", ""},
	{"DELETE", "/members/m1", ""},
	{"POST", "/quarantine/1/approve", ""},
	{"POST", "/quarantine/1/reject", ""},
	{"POST", "/disqualify", `{"member":"m1","reason":"r"}`},
	{"POST", "/reinstate", `{"member":"m1","reason":"r"}`},
	{"POST", "/settle", `{"reason":"r"}`},
	{"POST", "/void", `{"seq":1,"reason":"r"}`},
}

// lastSeq is tenant's stream's last sequence.
func (c *cluster) lastSeq(tenant string) uint64 {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.js.Stream(ctx, hub.StreamOf(tenant))
	if err != nil {
		c.t.Fatal(err)
	}
	return s.CachedInfo().State.LastSeq
}

// A write to a board created through another gateway, sent to a gateway
// whose replica has not applied it: never not_found. Held past the wait,
// every write to the board answers unavailable and publishes nothing (the
// stream does not grow: a retry elsewhere is safe); another tenant's write
// to the same name answers not_found at once; released while it waits, a
// submission is applied and answered.
func TestWritesNotFoundOnlyWhenCaughtUp(t *testing.T) {
	c, short, long, t1, t2 := lateBoard(t)
	before := c.lastSeq("t1")

	for _, w := range boardWrites {
		if got := call(w.method, short.URL()+"/v1/boards/late"+w.path, t1, w.body); got.status != 503 || got.code != "unavailable" {
			t.Errorf("%s %s on a node behind: %+v, want 503 unavailable", w.method, w.path, got)
		}
	}
	if after := c.lastSeq("t1"); after != before {
		t.Errorf("the refused writes published: the stream went from %d to %d", before, after)
	}

	start := time.Now()
	for _, w := range boardWrites {
		if got := call(w.method, long.URL()+"/v1/boards/late"+w.path, t2, w.body); got.status != 404 || got.code != "not_found" {
			t.Errorf("t2 %s %s: %+v, want 404 not_found", w.method, w.path, got)
		}
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("t2's writes took %v: they waited on t1's replica", d)
	}

	done := make(chan answer, 1)
	go func() {
		done <- call("POST", long.URL()+"/v1/boards/late/scores", t1, `{"member":"m1","score":7,"id":"w9"}`)
	}()
	await.For(t, 20*time.Second, func() error {
		select {
		case got := <-done:
			t.Fatalf("a write answered while the replica was held: %+v", got)
		default:
		}
		if n := gauge(t, long, "rankwire_reads_catching_up"); n != 1 {
			return fmt.Errorf("%v requests catching up, want 1", n)
		}
		return nil
	})
	if after := c.lastSeq("t1"); after != before {
		t.Errorf("a waiting write published: the stream went from %d to %d", before, after)
	}
	c.hold("t1", "long", true)
	if got := <-done; got.status != 200 {
		t.Errorf("the write once caught up: %+v, want 200", got)
	}
}
