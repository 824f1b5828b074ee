package subscriptions

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/rankwire/rankwire/board"
)

// chainSetup returns a window of 20 members, an engine and a client
// subscribed to the top 10 that has taken its snapshot.
func chainSetup(t *testing.T, notify func()) (*testWindow, *Engine, Key, *client, *Sub) {
	t.Helper()
	w := newTestWindow(t, board.Config{})
	for i := range 20 {
		w.submit(t, fmt.Sprint("p", i), float64(i))
	}
	e := NewEngine(Config{})
	key := Key{"t", "b", "all"}
	w.tick(e, key)
	c := newClient()
	c.out = NewOutbox(0, notify)
	s, err := e.Subscribe(key, w, c.out, "s", Spec{Kind: Top, Limit: 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.drain(t)
	return w, e, key, c, s
}

// TestOutboxChainsDiffs: for each k up to MaxChain, k ticks the writer
// does not take wait as k diffs (one notify, nothing coalesced), which the
// writer then takes in order, each one's prev the seq of the one before:
// the client sees every state.
func TestOutboxChainsDiffs(t *testing.T) {
	notified := 0
	w, e, key, c, s := chainSetup(t, func() { notified++ })
	best := 100.0
	for k := 1; k <= MaxChain; k++ {
		notified, c.msgs = 0, 0
		var seqs []uint64
		for range k {
			best++
			w.submit(t, fmt.Sprint("p", int(best)%20), best) // a new leader each tick
			w.tick(e, key)
			seqs = append(seqs, w.seq)
		}
		if n := c.out.Len(); n != k || notified != 1 {
			t.Fatalf("k=%d: %d messages wait after %d notifies, want %d after 1", k, n, notified, k)
		}
		for i, want := range seqs {
			m, ok := c.out.Next()
			if !ok {
				t.Fatalf("k=%d: message %d missing", k, i)
			}
			raw := m.AppendTo(nil)
			if !strings.HasPrefix(string(raw), `{"type":"diff"`) {
				t.Fatalf("k=%d: message %d is %s, want a diff", k, i, raw)
			}
			c.apply(t, raw) // checks prev against the last seq
			if c.seq["s"] != want {
				t.Fatalf("k=%d: message %d at seq %d, want %d", k, i, c.seq["s"], want)
			}
		}
		if _, more := c.out.Next(); more {
			t.Fatalf("k=%d: a message more than the chain waits", k)
		}
	}
	if got := e.Stats().Coalesced; got != 0 {
		t.Fatalf("%d states coalesced, want none", got)
	}
	if !sameRows(c.state["s"], rowsOf(s.v.st.rows)) {
		t.Fatalf("client holds %v, view is %v", c.state["s"], rowsOf(s.v.st.rows))
	}
}

// TestOutboxChainBound: a tick past a full chain replaces it with one
// message of the latest state (the catch-up diff from what the writer
// took), so a subscription never holds more than MaxChain; a partly taken
// chain is caught up from its last taken message.
func TestOutboxChainBound(t *testing.T) {
	w, e, key, c, s := chainSetup(t, nil)
	taken := c.seq["s"]
	for i := range MaxChain + 1 {
		w.submit(t, "p10", 10+float64(i+1)/10) // the 10th row changes, nothing else
		w.tick(e, key)
		if n := c.out.Len(); n > MaxChain {
			t.Fatalf("tick %d: %d messages wait, want at most %d", i, n, MaxChain)
		}
	}
	if n, co := c.out.Len(), e.Stats().Coalesced; n != 1 || co != 1 {
		t.Fatalf("past a full chain: %d wait, %d coalesced; want 1, 1", n, co)
	}
	m, _ := c.out.Next()
	if raw := string(m.AppendTo(nil)); !strings.Contains(raw, fmt.Sprintf(`"prev":%d`, taken)) {
		t.Fatalf("the replacing message %s, want a diff from seq %d", raw, taken)
	}
	c.apply(t, m.AppendTo(nil))

	// Three wait, the writer takes one, two more ticks fill the chain and
	// one overflows it: the catch-up starts at the message taken.
	for i := range 3 {
		w.submit(t, "p11", 11+float64(i+1)/10)
		w.tick(e, key)
	}
	m, _ = c.out.Next()
	c.apply(t, m.AppendTo(nil))
	taken = c.seq["s"]
	for i := range 3 {
		w.submit(t, "p12", 12+float64(i+1)/10)
		w.tick(e, key)
	}
	if n := c.out.Len(); n != 1 {
		t.Fatalf("after the overflow %d wait, want 1", n)
	}
	m, _ = c.out.Next()
	if raw := string(m.AppendTo(nil)); !strings.Contains(raw, fmt.Sprintf(`"prev":%d`, taken)) {
		t.Fatalf("the replacing message %s, want a diff from seq %d", raw, taken)
	}
	c.apply(t, m.AppendTo(nil))
	if !sameRows(c.state["s"], rowsOf(s.v.st.rows)) || c.seq["s"] != w.seq {
		t.Fatalf("client at seq %d (view at %d): %v", c.seq["s"], w.seq, c.state["s"])
	}
}

// TestOutboxChainsPerSubscription: two subscriptions of one connection
// keep chains of their own; the writer takes each chain whole, in the
// order the subscriptions became pending, and a dropped subscription's
// chain is skipped.
func TestOutboxChainsPerSubscription(t *testing.T) {
	w, e, key, c, _ := chainSetup(t, nil)
	s2, err := e.Subscribe(key, w, c.out, "t", Spec{Kind: Top, Limit: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.drain(t)
	for i := range 3 { // every tick changes both views: a new leader
		w.submit(t, fmt.Sprint("p", i), float64(100+i))
		w.tick(e, key)
	}
	if n := c.out.Len(); n != 6 {
		t.Fatalf("%d messages wait, want a chain of 3 per subscription", n)
	}
	var order []string
	for m, ok := c.out.Next(); ok; m, ok = c.out.Next() {
		order = append(order, m.sub.ID())
		c.apply(t, m.AppendTo(nil))
	}
	first := order[0]
	for i, id := range order {
		if (i < 3) != (id == first) {
			t.Fatalf("took %v, want each subscription's chain whole", order)
		}
	}
	w.submit(t, "p5", 200)
	w.tick(e, key)
	w.submit(t, "p6", 201)
	w.tick(e, key)
	e.Unsubscribe(s2)
	if n := c.out.Len(); n != 2 {
		t.Fatalf("after the unsubscribe %d wait, want the other chain's 2", n)
	}
	c.drain(t)
	if c.seq["s"] != w.seq {
		t.Fatalf("the remaining subscription at seq %d, want %d", c.seq["s"], w.seq)
	}
}

// TestOutboxChainConcurrent: ticks on one goroutine, the writer taking on
// another, as in the gateway: whatever they interleave, every message the
// writer takes chains on to the one before, at most MaxChain wait, and the
// client ends at the view's state. Run with -race.
func TestOutboxChainConcurrent(t *testing.T) {
	w, e, key, c, s := chainSetup(t, nil)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		defer close(stop)
		for i := range 2000 {
			w.submit(t, fmt.Sprint("p", i%20), float64(100+i))
			w.tick(e, key)
		}
	})
	for done := false; !done; {
		select {
		case <-stop:
			done = true
		default:
		}
		if n := c.out.Len(); n > MaxChain {
			t.Fatalf("%d messages wait, want at most %d", n, MaxChain)
		}
		c.drain(t) // apply checks every diff's prev
	}
	wg.Wait()
	c.drain(t)
	if !sameRows(c.state["s"], rowsOf(s.v.st.rows)) || c.seq["s"] != w.seq {
		t.Fatalf("client at seq %d (view at %d): %v", c.seq["s"], w.seq, c.state["s"])
	}
	if c.msgs < 2 {
		t.Fatalf("the client took %d messages", c.msgs)
	}
}
