package catchup

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
)

// startHub starts a hub alone on its embedded NATS, closed at cleanup, and
// a context bounding the test.
func startHub(t *testing.T) (context.Context, *hub.Hub) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	h, err := hub.Start(ctx, hub.Config{DataDir: t.TempDir(), DiscoverInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return ctx, h
}

// A read waiting for its replica is woken by the apply that reaches the
// sequence it waits for, not by polling: while the replica applies the
// events before it, one write at a time (each a publish round trip, long
// enough for a poll of 1 to 16 ms to look several times), the Gate looks
// at the applied sequence no more and the read is not called again; the
// apply of the last one answers it, and a second tenant's writes never
// wake it.
func TestWaitWokenByTheApply(t *testing.T) {
	ctx, h := startHub(t)
	for _, tenant := range []string{"t1", "t2"} {
		if _, err := h.PutBoard(ctx, tenant, "b", hub.Settings{}); err != nil {
			t.Fatal(err)
		}
	}
	const ahead = 10 // the stream is said to hold this many events more than applied here
	g := New(h, time.Minute)
	target := h.Beat("t1").Applied + ahead
	g.ask = func(context.Context, string) (uint64, error) { return target, nil }
	var reads atomic.Int32
	notFound := fmt.Errorf("board: %w", hub.ErrNotFound)
	read := func() error {
		if reads.Add(1) == 1 {
			return notFound
		}
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- g.Read(ctx, "t1", read) }()
	await.For(t, 20*time.Second, func() error {
		if n := g.Stats().Waiting; n != 1 {
			return fmt.Errorf("%d reads waiting, want 1", n)
		}
		return nil
	})
	looks := g.looks.Load()
	submit := func(tenant string, i int) {
		t.Helper()
		if _, err := h.Submit(ctx, tenant, "b", []hub.Item{{Member: "m", Score: float64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range ahead - 1 {
		submit("t2", i) // another tenant's applies wake nothing here
		submit("t1", i)
		if len(done) > 0 || reads.Load() != 1 || g.looks.Load() != looks {
			t.Fatalf("after %d of %d applies: answered %v, %d reads, %d looks (from %d): woken early or polled",
				i+1, ahead, len(done) > 0, reads.Load(), g.looks.Load(), looks)
		}
	}
	submit("t1", ahead) // Submit returns once applied here: the waiter is woken by now, or about to be
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the read was not woken by the apply it waited for")
	}
	if reads.Load() != 2 || g.looks.Load() != looks {
		t.Fatalf("%d reads and %d more looks, want 2 reads and no look while waiting", reads.Load(), g.looks.Load()-looks)
	}
	if s := g.Stats(); s.Waiting != 0 || s.Behind != 0 {
		t.Fatalf("%+v", s)
	}
}

// A read of a tenant this node has not opened waits for its opening
// (here: a write opens it) and is then woken by its apply; one whose
// wait ends first answers unavailable.
func TestWaitForATenantNotOpenHere(t *testing.T) {
	ctx, h := startHub(t)
	g := New(h, 30*time.Second)
	g.ask = func(context.Context, string) (uint64, error) { return 1, nil } // the first event: the board's creation
	done := make(chan error, 1)
	go func() { done <- g.Read(ctx, "t3", func() error { return hub.ErrNotFound }) }()
	await.For(t, 20*time.Second, func() error {
		if n := g.Stats().Waiting; n != 1 {
			return fmt.Errorf("%d reads waiting, want 1", n)
		}
		return nil
	})
	if _, err := h.PutBoard(ctx, "t3", "b", hub.Settings{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done: // caught up, read again: still not found (the read says so), now truthfully
		if !errors.Is(err, hub.ErrNotFound) || g.Stats().Behind != 0 {
			t.Fatalf("Read: %v (%+v), want the read's own not found once caught up", err, g.Stats())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read was not woken by the tenant's opening")
	}
	short := New(h, 50*time.Millisecond)
	short.ask = func(context.Context, string) (uint64, error) { return 1 << 40, nil }
	if err := short.Read(ctx, "t3", func() error { return hub.ErrNotFound }); !errors.Is(err, hub.ErrUnavailable) {
		t.Fatalf("a wait that ends first: %v, want unavailable", err)
	}
}
