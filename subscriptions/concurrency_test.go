package subscriptions

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/rankwire/rankwire/board"
)

// Board-windows do not wait for each other: while one board-window's
// work is held (its lock taken, as a long recompute would), a subscription
// to another tenant's board-window is made at once, and a Flush delivers
// that other board-window's diff before the held one is released.
func TestBoardWindowsDoNotWaitForEachOther(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	e := NewEngine(Config{})
	slowKey, fastKey := Key{"tenant-a", "b", "all"}, Key{"tenant-b", "b", "all"}
	slow, fast := newTestWindow(t, board.Config{}), newTestWindow(t, board.Config{})
	slow.submit(t, "p1", 1)
	fast.submit(t, "q1", 1)
	slowOut, fastOut := NewOutbox(0, nil), NewOutbox(0, nil)
	if _, err := e.Subscribe(slowKey, slow, slowOut, "s", Spec{Kind: Top, Limit: 10}, nil); err != nil {
		t.Fatal(err)
	}
	held := e.windows[slowKey]
	held.mu.Lock() // tenant-a's board-window is busy
	released := false
	defer func() {
		if !released {
			held.mu.Unlock()
		}
	}()

	done := make(chan error, 1)
	go func() {
		_, err := e.Subscribe(fastKey, fast, fastOut, "f", Spec{Kind: Top, Limit: 10}, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a subscription to tenant-b waited for tenant-a's board-window")
	}
	if _, ok := fastOut.Next(); !ok {
		t.Fatal("no snapshot for tenant-b's subscription")
	}

	fast.submit(t, "q2", 5)
	e.Apply(fastKey, fast, fast.pending, false)
	fast.pending = nil
	flushed := make(chan struct{})
	go func() { e.Flush(); close(flushed) }()
	deadline := time.After(10 * time.Second)
	for fastOut.Len() == 0 {
		select {
		case <-deadline:
			t.Fatal("tenant-b's diff waited for tenant-a's board-window")
		case <-time.After(time.Millisecond): // polling the outbox: Flush signals nothing per board-window
		}
	}
	select {
	case <-flushed:
		t.Fatal("Flush returned while a board-window it must flush was held")
	default:
	}
	held.mu.Unlock()
	released = true
	<-flushed
}

// A board-window with more dirty views than parallelViews is read on
// several goroutines; every client still ends with exactly the view a
// fresh read gives, through an unbroken chain of diffs.
func TestManyDirtyViewsReadInParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const n = 2000
	w := newTestWindow(t, board.Config{Policy: board.Latest})
	for i := range n {
		w.submit(t, "m"+strconv.Itoa(i), float64(i))
	}
	e := NewEngine(Config{})
	key := Key{"t", "b", "all"}
	w.tick(e, key)
	c := newClient()
	specs := map[string]Spec{}
	for i := range 3 * parallelViews {
		id := "s" + strconv.Itoa(i)
		specs[id] = Spec{Kind: Around, Member: "m" + strconv.Itoa(i*n/(3*parallelViews)), Radius: 2}
		if _, err := e.Subscribe(key, w, c.out, id, specs[id], nil); err != nil {
			t.Fatal(err)
		}
	}
	c.drain(t)
	rng := rand.New(rand.NewPCG(3, 3))
	for range 5 {
		for range 300 { // moves all over the board: most views are dirty
			w.submit(t, "m"+strconv.Itoa(rng.IntN(n)), float64(rng.IntN(2*n)))
		}
		w.tick(e, key)
		c.drain(t)
	}
	for id, spec := range specs {
		if want := rowsOf(compute(spec, w).rows); !sameRows(c.state[id], want) {
			t.Fatalf("%s: client %v, fresh read %v", id, c.state[id], want)
		}
	}
}
