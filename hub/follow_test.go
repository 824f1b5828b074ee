package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// consumerNames lists the consumers of tenant's stream.
func consumerNames(t *testing.T, h *Hub, tenant string) []string {
	t.Helper()
	s, err := h.js.Stream(testCtx(t), streamName(tenant))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	l := s.ConsumerNames(testCtx(t))
	for n := range l.Name() {
		names = append(names, n)
	}
	if err := l.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		t.Fatal(err)
	}
	return names
}

// A replica whose consumer disappears (its server died, or deleted it)
// makes another from the next sequence, and the writes acknowledged
// meanwhile are applied and answered: none waits for ever, none is lost.
func TestReplicaReplacesALostConsumer(t *testing.T) {
	var logs logBuf
	h := startHub(t, Config{Logger: logs.logger(), WriteTimeout: 5 * time.Second})
	mustPut(t, h, "t1", "b", Settings{Policy: "sum"})
	mustSubmit(t, h, "t1", "b", Item{Member: "p1", Score: 1})
	names := consumerNames(t, h, "t1")
	if len(names) != 1 {
		t.Fatalf("consumers %v, want the replica's one", names)
	}
	for range 3 { // three losses in a row: each replacement is replaced in turn
		old := consumerNames(t, h, "t1")
		for _, n := range old {
			if err := h.js.DeleteConsumer(testCtx(t), streamName("t1"), n); err != nil {
				t.Fatal(err)
			}
		}
		mustSubmit(t, h, "t1", "b", Item{Member: "p1", Score: 1})
		checkFor(t, 5*time.Second, func() error {
			if now := consumerNames(t, h, "t1"); len(now) != 1 || now[0] == old[0] {
				return errors.New("no new consumer yet")
			}
			return nil
		})
	}
	if got := top(t, h, Loc{Tenant: "t1", Board: "b"}); len(got) != 1 || got[0] != "p1:4" {
		t.Fatalf("board %v, want p1:4 (every write applied once)", got)
	}
	checkFor(t, 5*time.Second, func() error { // counted once the creation returned, after the server has it
		if n := h.NATS().ConsumerResets; n < 3 {
			return fmt.Errorf("consumer resets %d, want at least 3", n)
		}
		return nil
	})
	if logs.Count("replica's consumer lost") < 3 {
		t.Errorf("no log line for each lost consumer")
	}
}

// A write JetStream stored but the local replica does not apply within
// the write timeout answers 503 (unavailable, retry with the same id)
// instead of waiting for ever, and is counted.
func TestApplyWaitIsBounded(t *testing.T) {
	var logs logBuf
	h := startHub(t, Config{Logger: logs.logger(), WriteTimeout: 200 * time.Millisecond})
	mustPut(t, h, "t1", "b", Settings{})
	r := h.reg.lookup("t1")
	never := r.waits.Expect("never") // an apply that does not come
	start := time.Now()
	err := h.streams.awaitApply(testCtx(t), r, never)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "same id") {
		t.Fatalf("err = %v, want unavailable naming the retry", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("waited %v for a 200ms write timeout", waited)
	}
	if h.NATS().ApplyTimeouts != 1 || logs.Count("not applied here in time") != 1 {
		t.Fatalf("apply timeouts %d, log lines %d, want 1 and 1", h.NATS().ApplyTimeouts, logs.Count("not applied here in time"))
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	if err := h.streams.awaitApply(ctx, r, never); !errors.Is(err, context.Canceled) {
		t.Fatalf("a caller that gave up: %v, want its context's error", err)
	}
}
