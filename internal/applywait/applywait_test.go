package applywait

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// waitAsync runs s.Wait(ctx, seq, stop) on a goroutine of the test and
// returns the channel its error arrives on, once the call is registered
// (Stats().Waiting grew) or returned.
func waitAsync(t *testing.T, s *Set[int], ctx context.Context, seq uint64, stop <-chan struct{}) <-chan error {
	t.Helper()
	before := s.Stats().Waiting
	out := make(chan error, 1)
	go func() { out <- s.Wait(ctx, seq, stop) }()
	await.For(t, 10*time.Second, func() error {
		if s.Stats().Waiting == before && len(out) == 0 {
			return errors.New("the waiter has not registered")
		}
		return nil
	})
	return out
}

// pending reports whether ch has no value yet.
func pending(ch <-chan error) bool { return len(ch) == 0 }

func TestWaitWokenByTheApplyThatReachesIt(t *testing.T) {
	var s Set[int]
	ctx := context.Background()
	got := waitAsync(t, &s, ctx, 5, nil)
	for seq := uint64(1); seq < 5; seq++ {
		s.Applied(seq, "", 0)
		if st := s.Stats(); st.Waiting != 1 || st.Woken != 0 || !pending(got) {
			t.Fatalf("after apply %d: %+v, answered %v: woken before its sequence", seq, st, !pending(got))
		}
	}
	s.Applied(5, "", 0)
	if err := <-got; err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if st := s.Stats(); st.Waiting != 0 || st.Woken != 1 || st.Applied != 5 {
		t.Fatalf("after apply 5: %+v", st)
	}
	if err := s.Wait(ctx, 3, nil); err != nil { // applied already: at once
		t.Fatalf("Wait for an applied seq: %v", err)
	}
}

// Each waiter is woken exactly once, whatever the number of applies: the
// wakeups are O(waiters), not O(applies × waiters).
func TestWakeupsCountWaitersNotApplies(t *testing.T) {
	var s Set[int]
	const waiters, applies = 50, 2000
	var outs []<-chan error
	for i := range waiters {
		outs = append(outs, waitAsync(t, &s, context.Background(), uint64(applies-i*7), nil))
	}
	for seq := uint64(1); seq <= applies; seq++ {
		s.Applied(seq, "", 0)
	}
	for _, o := range outs {
		if err := <-o; err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Woken != waiters || st.Waiting != 0 {
		t.Fatalf("%+v: want %d woken, each once, none waiting", st, waiters)
	}
}

func TestFlights(t *testing.T) {
	var s Set[string]
	f := s.Expect("k1")
	g := s.Expect("k2")
	s.Applied(1, "other", "x")
	select {
	case <-f.Done():
		t.Fatal("k1 done by another key's apply")
	default:
	}
	s.Applied(2, "k1", "out1")
	<-f.Done()
	if f.Out() != "out1" {
		t.Fatalf("Out = %q", f.Out())
	}
	s.Forget("k2")
	s.Applied(3, "k2", "late")
	select {
	case <-g.Done():
		t.Fatal("a forgotten flight completed")
	default:
	}
	s.Applied(4, "", "none") // an empty key completes nothing
}

func TestWaitLeavesOnContextAndStop(t *testing.T) {
	var s Set[int]
	ctx, cancel := context.WithCancel(context.Background())
	byCtx := waitAsync(t, &s, ctx, 10, nil)
	stop := make(chan struct{})
	byStop := waitAsync(t, &s, context.Background(), 10, stop)
	cancel()
	if err := <-byCtx; !errors.Is(err, context.Canceled) {
		t.Fatalf("ctx ended: %v", err)
	}
	close(stop)
	if err := <-byStop; !errors.Is(err, ErrStopped) {
		t.Fatalf("stopped: %v", err)
	}
	if st := s.Stats(); st.Waiting != 0 {
		t.Fatalf("%+v: the waiters that left are still counted", st)
	}
}

// One past MaxWaiters fails at once; one that left makes room.
func TestMaxWaiters(t *testing.T) {
	var s Set[int]
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range MaxWaiters {
		wg.Go(func() { _ = s.Wait(ctx, 2, nil) })
	}
	await.For(t, 30*time.Second, func() error {
		if n := s.Stats().Waiting; n < MaxWaiters {
			return fmt.Errorf("%d waiters registered", n)
		}
		return nil
	})
	if err := s.Wait(ctx, 2, nil); !errors.Is(err, ErrTooMany) {
		t.Fatalf("one past the limit: %v, want ErrTooMany", err)
	}
	if err := s.Wait(ctx, 0, nil); err != nil { // applied already: no room needed
		t.Fatalf("an applied seq at the limit: %v", err)
	}
	s.Applied(2, "", 0)
	wg.Wait()
	cancel()
	if st := s.Stats(); st.Waiting != 0 || st.Woken != MaxWaiters {
		t.Fatalf("%+v", st)
	}
}

// A model: random waits, departures and applies against a plain list of
// what waits; after every step, the waiters the Set still holds are
// exactly those not applied and not departed.
func TestModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("APPLYWAIT_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (APPLYWAIT_SEED)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	var s Set[int]
	type call struct {
		seq    uint64
		cancel context.CancelFunc
		out    <-chan error
		left   bool
	}
	var calls []*call
	var at uint64
	for step := range 400 {
		switch op := rng.IntN(4); {
		case op == 0:
			ctx, cancel := context.WithCancel(context.Background())
			seq := at + uint64(rng.IntN(20))
			c := &call{seq: seq, cancel: cancel, out: waitAsync(t, &s, ctx, seq, nil)}
			if seq <= at { // applied already: answered at once
				if err := <-c.out; err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				c.left = true
			}
			calls = append(calls, c)
		case op == 1 && len(calls) > 0:
			c := calls[rng.IntN(len(calls))]
			c.cancel()
			if !c.left {
				err := <-c.out
				if c.seq <= at && err != nil || c.seq > at && !errors.Is(err, context.Canceled) {
					t.Fatalf("step %d: left with %v at %d waiting %d", step, err, at, c.seq)
				}
				c.left = true
			}
		default:
			at += uint64(rng.IntN(3))
			s.Applied(at, "", 0)
			for _, c := range calls {
				if !c.left && c.seq <= at {
					if err := <-c.out; err != nil {
						t.Fatalf("step %d: woken with %v", step, err)
					}
					c.left = true
				}
			}
		}
		want := 0
		for _, c := range calls {
			if !c.left {
				want++
				if !pending(c.out) {
					t.Fatalf("step %d: a waiter for %d answered at %d", step, c.seq, at)
				}
			}
		}
		if st := s.Stats(); st.Waiting != want || st.Applied != at {
			t.Fatalf("step %d: %+v, want %d waiting at %d", step, st, want, at)
		}
	}
	for _, c := range calls {
		c.cancel()
	}
}

// BenchmarkApplied is an apply's cost when nobody waits for a sequence
// and one flight is completed: the replica's path per event.
func BenchmarkApplied(b *testing.B) {
	b.ReportAllocs()
	var s Set[int]
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	b.ResetTimer()
	for i := range b.N {
		k := keys[i%len(keys)]
		s.Expect(k)
		s.Applied(uint64(i+1), k, i)
	}
}
