package clusterops

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/natstest"

	"github.com/nats-io/nats.go/jetstream"
)

// A server outside a cluster leads no replicated stream: StepDown hands
// nothing over and asks nothing of it. (The handover itself is tested
// with three gateway processes: cmd/gateway TestPlannedLeaderStop.)
func TestStepDownAloneHandsNothing(t *testing.T) {
	s := natstest.Server(t)
	_, js := natstest.Connect(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}}); err != nil {
		t.Fatal(err)
	}
	led, err := Led(ctx, js, s.Name())
	if err != nil || len(led) != 0 {
		t.Fatalf("Led: %v, %v; want none", led, err)
	}
	handoffs, err := StepDown(ctx, js, s.Name())
	if err != nil || len(handoffs) != 0 {
		t.Fatalf("StepDown: %v, %v; want nothing handed over", handoffs, err)
	}
}

// KeepDropping deletes a consumer made after it started (a reader's new
// consumer placed on the stopping node after the handover's last look),
// and returns, counting it, once its context ends.
func TestKeepDroppingDeletesLateConsumers(t *testing.T) {
	_, js := natstest.Connect(t, natstest.Server(t))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}})
	if err != nil {
		t.Fatal(err)
	}
	names := func(string) []string {
		var out []string
		l := st.ConsumerNames(ctx)
		for n := range l.Name() {
			out = append(out, n)
		}
		if l.Err() != nil {
			t.Logf("listing: %v", l.Err())
		}
		return out
	}
	var seen atomic.Bool   // KeepDropping was told of it
	var looks atomic.Int64 // KeepDropping's looks: one more after the deletion, and its count has it
	hosted := func(stream string) []string {
		looks.Add(1)
		got := names(stream)
		if slices.Contains(got, "late") {
			seen.Store(true)
		}
		return got
	}
	kctx, stop := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() { done <- KeepDropping(kctx, js, Local{Led: []string{"S"}, Consumers: hosted}) }()
	if _, err := js.CreateConsumer(ctx, "S", jetstream.ConsumerConfig{Name: "late"}); err != nil {
		t.Fatal(err)
	}
	await.For(t, 5*time.Second, func() error {
		if got := names("S"); len(got) != 0 || !seen.Load() {
			return fmt.Errorf("consumers still there: %v (seen by KeepDropping: %v)", got, seen.Load())
		}
		return nil
	})
	after := looks.Load()
	await.For(t, 5*time.Second, func() error {
		if looks.Load() == after {
			return fmt.Errorf("KeepDropping has not looked again since the deletion")
		}
		return nil
	})
	stop()
	if n := <-done; n < 1 {
		t.Fatalf("KeepDropping counted %d deletions, want at least 1", n)
	}
}
