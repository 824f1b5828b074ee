package raftcompact

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/natstest"
)

// A lone server keeps no Raft log of its streams: nothing to do, no failure
// (the clustered case: cmd/gateway's TestEraseOnThreeNodes).
func TestLoneServerNothingToDo(t *testing.T) {
	s := natstest.Server(t)
	_, js := natstest.Connect(t, s)
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}}); err != nil {
		t.Fatal(err)
	}
	c := &Compactor{Server: s, JS: js, Account: server.DEFAULT_GLOBAL_ACCOUNT, Log: slog.Default(), Ctx: context.Background(), WG: &sync.WaitGroup{}}
	start := time.Now()
	c.Streams("S")
	c.WG.Wait()
	if c.Failures() != 0 || time.Since(start) > time.Second {
		t.Fatalf("failures %d after %v", c.Failures(), time.Since(start))
	}
}

// refusing refuses a snapshot n times (a follower that has applied nothing
// yet says so), then takes it.
type refusing struct {
	mu    sync.Mutex
	n     int
	calls []string
}

func (r *refusing) JetStreamIsStreamLeader(string, string) bool { return false }

func (r *refusing) JetStreamSnapshotStream(account, stream string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, account+"/"+stream)
	if r.n > 0 {
		r.n--
		return errors.New("raft: no snapshot available")
	}
	return nil
}

func TestRetriesUntilTaken(t *testing.T) {
	r := &refusing{n: 2}
	c := &Compactor{Server: r, Account: "$G", Log: slog.Default(), Ctx: context.Background(), WG: &sync.WaitGroup{}}
	c.Streams("A", "B")
	c.WG.Wait()
	want := []string{"$G/A", "$G/A", "$G/A", "$G/B"}
	if c.Failures() != 0 || len(r.calls) != len(want) {
		t.Fatalf("failures %d, calls %v, want %v", c.Failures(), r.calls, want)
	}
	for i := range want {
		if r.calls[i] != want[i] {
			t.Fatalf("calls %v, want %v", r.calls, want)
		}
	}
}

// The owner's close stops the attempts: each stream tried once, counted,
// into the owner's counter where it gives one (the gateway's metric).
func TestStopsWithOwner(t *testing.T) {
	for _, owner := range []*atomic.Uint64{nil, new(atomic.Uint64)} {
		r := &refusing{n: 1 << 30}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c := &Compactor{Server: r, Account: "$G", Log: slog.Default(), Ctx: ctx, WG: &sync.WaitGroup{}, Failed: owner}
		c.Streams("A", "B")
		c.WG.Wait()
		if c.Failures() != 2 || len(r.calls) != 2 {
			t.Fatalf("owner's counter %v: failures %d, calls %v", owner != nil, c.Failures(), r.calls)
		}
		if owner != nil && owner.Load() != 2 {
			t.Fatalf("the owner's counter holds %d, want 2", owner.Load())
		}
	}
}

// A nil Compactor (no embedded server in a cluster) does nothing.
func TestNilCompactor(t *testing.T) {
	var c *Compactor
	c.Streams("A")
}
