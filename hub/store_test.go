package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStoreFullRecovers fills a 1 MB store: writes then fail with
// ErrStoreFull (naming no stream) and Writable says the store is full; once
// a stream is deleted, freeing its bytes, writes and Writable recover with
// no restart.
func TestStoreFullRecovers(t *testing.T) {
	h := startHub(t, Config{MaxStore: 1 << 20, SnapshotEvery: -1})
	ctx := testCtx(t)
	mustPut(t, h, "keep", "b", Settings{})
	mustPut(t, h, "filler", "b", Settings{})
	if err := h.Writable(ctx); err != nil {
		t.Fatalf("Writable at start: %v", err)
	}
	items := make([]Item, 500)
	var err error
	for round := 0; round < 200 && err == nil; round++ { // 200 × ~25 KB: 5 MB, well past 1 MB
		for i := range items {
			items[i] = Item{Member: fmt.Sprintf("m%04d-%03d", i, round), Score: float64(round), ID: fmt.Sprintf("%03d-%04d-%s", round, i, strings.Repeat("x", 16))}
		}
		_, err = h.Submit(ctx, "filler", "b", items)
	}
	if !errors.Is(err, ErrStoreFull) || !errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), "RW_") {
		t.Fatalf("filling: %v, want ErrStoreFull naming no stream", err)
	}
	if _, err := h.Submit(ctx, "keep", "b", []Item{{Member: "ann", Score: 1}}); !errors.Is(err, ErrStoreFull) {
		t.Fatalf("another tenant's write on a full store: %v", err)
	}
	if _, err := h.PutBoard(ctx, "newcomer", "b", Settings{}); !errors.Is(err, ErrStoreFull) || strings.Contains(err.Error(), "RW_") {
		t.Fatalf("a new tenant on a full store: %v", err)
	}
	if err := h.Writable(ctx); !errors.Is(err, ErrStoreFull) {
		t.Fatalf("Writable on a full store: %v", err)
	}
	if err := h.js.DeleteStream(ctx, streamName("filler")); err != nil { // what an operator would free
		t.Fatal(err)
	}
	checkFor(t, 10*time.Second, func() error { return h.Writable(ctx) })
	res := mustSubmit(t, h, "keep", "b", Item{Member: "ann", Score: 2})
	if !res[0].Applied {
		t.Fatalf("after freeing: %+v", res[0])
	}
}

// TestJetStreamDisabledRecovers: JetStream turned off under the Hub (as
// NATS does on some write errors) makes Writable fail; the disk watch
// starts it again and writes resume with no restart.
func TestJetStreamDisabledRecovers(t *testing.T) {
	h := startHub(t, Config{SnapshotEvery: -1})
	ctx := testCtx(t)
	mustPut(t, h, "t1", "b", Settings{})
	// API requests all through the restart: without the gate (apigate.go)
	// the race detector finds one racing nats-server's EnableJetStream.
	stop := make(chan struct{})
	var requests sync.WaitGroup
	requests.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			c, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			_ = h.JetStreamAPI(func() error { _, err := h.JetStream().AccountInfo(c); return err })
			cancel()
		}
	})
	defer func() { close(stop); requests.Wait() }()
	if err := h.srv.ShutdownJetStream(); err != nil {
		t.Fatal(err)
	}
	if err := h.Writable(ctx); err == nil || !errors.Is(err, ErrUnavailable) {
		// the watch may already have restarted it; then it must work below
		t.Logf("Writable right after the shutdown: %v", err)
	}
	checkFor(t, 20*time.Second, func() error {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if err := h.Writable(c); err != nil {
			return err
		}
		_, err := h.Submit(c, "t1", "b", []Item{{Member: "ann", Score: 1}})
		return err
	})
}
