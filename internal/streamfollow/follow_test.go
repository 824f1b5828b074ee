package streamfollow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/natstest"
)

// fixture is a stream on an embedded server and a Follower of it whose
// deliveries are recorded.
type fixture struct {
	t    *testing.T
	js   jetstream.JetStream
	f    *Follower
	mu   sync.Mutex
	seqs []uint64 // delivered, in order
	data []string
}

func newFixture(t *testing.T, start uint64) *fixture {
	t.Helper()
	nc, js := natstest.JetStream(t)
	ctx := testCtx(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}}); err != nil {
		t.Fatal(err)
	}
	pos := &Position{}
	pos.Start(start)
	x := &fixture{t: t, js: js}
	x.f = &Follower{JS: js, Gate: func(f func() error) error { return f() }, Stream: "S", Server: nc.ConnectedServerName,
		Prefix: "rw_test_", Pos: pos, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Resets: &atomic.Uint64{}}
	return x
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// run starts the Follower until the test ends.
func (x *fixture) run() {
	ctx, cancel := context.WithCancel(context.Background())
	msgs, name, err := x.f.Consume(testCtx(x.t))
	if err != nil {
		x.t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		x.f.Run(ctx, msgs, name, func(_ context.Context, seq uint64, _ time.Time, data []byte) error {
			x.mu.Lock()
			defer x.mu.Unlock()
			x.seqs = append(x.seqs, seq)
			x.data = append(x.data, string(data))
			return nil
		})
	})
	x.t.Cleanup(func() { cancel(); wg.Wait() })
}

func (x *fixture) publish(n int) {
	x.t.Helper()
	for range n {
		ack, err := x.js.Publish(testCtx(x.t), "s", []byte("m"))
		if err != nil {
			x.t.Fatal(err)
		}
		x.f.Pos.NoteStored(ack.Sequence)
	}
}

// awaitDelivered waits until the stream's messages after start up to last
// were delivered, each once and in order.
func (x *fixture) awaitDelivered(start, last uint64) {
	x.t.Helper()
	await.For(x.t, 20*time.Second, func() error {
		x.mu.Lock()
		defer x.mu.Unlock()
		if uint64(len(x.seqs)) != last-start {
			return fmt.Errorf("delivered %v, want %d..%d", x.seqs, start+1, last)
		}
		for i, s := range x.seqs {
			if s != start+1+uint64(i) {
				x.t.Fatalf("delivered %v: not each once in order from %d", x.seqs, start+1)
			}
		}
		return nil
	})
}

func (x *fixture) consumers() []string {
	x.t.Helper()
	s, err := x.js.Stream(testCtx(x.t), "S")
	if err != nil {
		x.t.Fatal(err)
	}
	var names []string
	l := s.ConsumerNames(testCtx(x.t))
	for n := range l.Name() {
		names = append(names, n)
	}
	if err := l.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		x.t.Fatal(err)
	}
	return names
}

// A follower starts after its Position, and whenever its consumer is
// deleted makes another from the next sequence and deletes none it still
// uses: every message is delivered once, in order, and each replacement
// counted.
func TestReplacesADeletedConsumer(t *testing.T) {
	x := newFixture(t, 2)
	x.publish(4) // 1 and 2 stand before the Position: never delivered
	x.run()
	x.awaitDelivered(2, 4)
	for i := range 3 {
		old := x.consumers()
		if len(old) != 1 || old[0] != "rw_test_"+strconv.Itoa(i+1) {
			t.Fatalf("consumers %v, want the follower's one", old)
		}
		if err := x.js.DeleteConsumer(testCtx(t), "S", old[0]); err != nil {
			t.Fatal(err)
		}
		x.publish(2)
		x.awaitDelivered(2, uint64(4+2*(i+1)))
	}
	await.For(t, 10*time.Second, func() error {
		if n := x.f.Resets.Load(); n != 3 || x.f.Pos.Consumers() != 4 {
			return fmt.Errorf("%d resets, %d consumers made; want 3 and 4", n, x.f.Pos.Consumers())
		}
		return nil
	})
}

// A consumer that delivers nothing while a later sequence is known stored
// (here: paused by the server) is replaced by the watchdog, and the
// messages behind it are delivered.
func TestReplacesAStalledConsumer(t *testing.T) {
	x := newFixture(t, 0)
	x.publish(1)
	x.run()
	x.awaitDelivered(0, 1)
	names := x.consumers()
	if _, err := x.js.PauseConsumer(testCtx(t), "S", names[0], time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	x.publish(3) // NoteStored: the follower is behind from now
	x.awaitDelivered(0, 4)
	if n := x.f.Resets.Load(); n != 1 {
		t.Fatalf("%d resets, want 1 (the stalled consumer replaced)", n)
	}
}
