package subscriptions

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/board"
)

// TestOutboxNotifiesOnJoinOnly: a subscription's message that chains on
// to or replaces one still waiting does not notify again (the writer owed
// the first one comes anyway), and the writer, coming after any number of
// replacements, ends the client at the view's latest state.
func TestOutboxNotifiesOnJoinOnly(t *testing.T) {
	w := newTestWindow(t, board.Config{})
	for i := range 20 {
		w.submit(t, fmt.Sprint("p", i), float64(i))
	}
	e := NewEngine(Config{})
	key := Key{"t", "b", "all"}
	w.tick(e, key)
	notified := 0
	c := newClient()
	c.out = NewOutbox(0, func() { notified++ })
	sub, err := e.Subscribe(key, w, c.out, "s", Spec{Kind: Top, Limit: 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if notified != 1 {
		t.Fatalf("after subscribe: %d notifies, want 1", notified)
	}
	for i := range 2 * MaxChain { // new leaders while the writer is away: a chain, replaced, chained on to
		w.submit(t, fmt.Sprint("p", i), float64(100+i))
		w.tick(e, key)
	}
	if notified != 1 || c.out.Len() > MaxChain {
		t.Fatalf("after %d ticks: %d notifies, %d waiting; want 1, at most %d", 2*MaxChain, notified, c.out.Len(), MaxChain)
	}
	c.drain(t)
	if c.msgs > MaxChain || !sameRows(c.state["s"], rowsOf(sub.v.st.rows)) || c.seq["s"] != w.seq {
		t.Fatalf("client got %d messages, at seq %d (view at %d): %v", c.msgs, c.seq["s"], w.seq, c.state["s"])
	}
	w.submit(t, "p7", 1000) // the queue is empty again: the next put notifies
	w.tick(e, key)
	if notified != 2 {
		t.Fatalf("after the drain and one more tick: %d notifies, want 2", notified)
	}
	c.drain(t)
	if !sameRows(c.state["s"], rowsOf(sub.v.st.rows)) || c.seq["s"] != w.seq {
		t.Fatalf("client at seq %d (view at %d): %v", c.seq["s"], w.seq, c.state["s"])
	}
}

// TestOutboxQueueDoesNotAllocate: the ready queue reuses its array, so a
// watcher's message per tick allocates nothing in the outbox.
func TestOutboxQueueDoesNotAllocate(t *testing.T) {
	o := NewOutbox(0, nil)
	subs := []*Sub{newSub("a", Top, nil, o), newSub("b", Top, nil, o), newSub("c", Top, nil, o)}
	m := &shared{typ: "diff", body: []byte(`{}`), seq: 1}
	allocs := testing.AllocsPerRun(100, func() {
		for _, s := range subs {
			o.put(s, m)
		}
		for n := 0; ; n++ {
			if _, ok := o.Next(); !ok {
				if n != len(subs) {
					t.Fatalf("took %d messages, want %d", n, len(subs))
				}
				break
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per round of puts and takes, want 0", allocs)
	}
}

// TestOutboxQueueCompacts: a queue whose writer takes while puts keep
// coming holds only what waits, not everything since it last emptied.
func TestOutboxQueueCompacts(t *testing.T) {
	o := NewOutbox(0, nil)
	m := &shared{typ: "diff", body: []byte(`{}`), seq: 1}
	subs := make([]*Sub, 8)
	for i := range subs {
		subs[i] = newSub(fmt.Sprint("s", i), Top, nil, o)
		o.put(subs[i], m)
	}
	for i := range 10_000 { // take one, put it back: never empty
		msg, ok := o.Next()
		if !ok {
			t.Fatalf("round %d: empty", i)
		}
		o.put(msg.sub, m)
	}
	if o.Len() != len(subs) || cap(o.ready) > 4*len(subs) {
		t.Fatalf("%d waiting in an array of %d, want %d in at most %d", o.Len(), cap(o.ready), len(subs), 4*len(subs))
	}
}

// TestSubIDJSON: short and long ids, and ids needing escapes, frame the
// same JSON whether they fit in the Sub or not.
func TestSubIDJSON(t *testing.T) {
	for _, id := range []string{"s", strings.Repeat("x", 20), strings.Repeat("y", 21), strings.Repeat("z", 300), `a"b\c`} {
		s := newSub(id, Top, nil, nil)
		if got, want := string(s.idJSON), string(appendString(nil, id)); got != want {
			t.Errorf("id %q: JSON %s, want %s", id, got, want)
		}
	}
}

// TestOutboxFirstSubNotReused: the outbox's own Sub serves its first
// subscription only; one dropped while its message waits is skipped, and a
// later subscription of the same name gets a Sub of its own.
func TestOutboxFirstSubNotReused(t *testing.T) {
	w := newTestWindow(t, board.Config{})
	for i := range 20 {
		w.submit(t, fmt.Sprint("p", i), float64(i))
	}
	e := NewEngine(Config{})
	key := Key{"t", "b", "all"}
	w.tick(e, key)
	c := newClient()
	s1, err := e.Subscribe(key, w, c.out, "s", Spec{Kind: Top, Limit: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s1 != &c.out.first {
		t.Fatal("the first subscription is not in the outbox's memory")
	}
	e.Unsubscribe(s1) // its snapshot still waits in the queue
	s2, err := e.Subscribe(key, w, c.out, "s", Spec{Kind: Top, Limit: 5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s2 == s1 {
		t.Fatal("the dropped subscription's Sub was reused")
	}
	c.drain(t)
	if c.msgs != 1 || len(c.state["s"]) != 5 {
		t.Fatalf("client got %d messages, %d rows; want 1 snapshot of the top 5", c.msgs, len(c.state["s"]))
	}
	w.submit(t, "p3", 1000)
	w.tick(e, key)
	c.drain(t)
	if !sameRows(c.state["s"], rowsOf(s2.v.st.rows)) || c.seq["s"] != w.seq {
		t.Fatalf("client at seq %d (view at %d): %v", c.seq["s"], w.seq, c.state["s"])
	}
}
