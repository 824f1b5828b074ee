package subscriptions

import (
	"fmt"
	"testing"

	"github.com/rankwire/rankwire/board"
)

// TestWatchersSliceUnsubscribe: a view's watchers are a slice that
// Unsubscribe closes by moving the last one into the gap. After 300
// watchers subscribe and 280 leave (the first, the last, every other one,
// some twice), the 20 left each hold their own index, the view's array has
// shrunk, a tick reaches every one left and nobody who left, and a second
// Unsubscribe changes nothing.
func TestWatchersSliceUnsubscribe(t *testing.T) {
	w := newTestWindow(t, board.Config{})
	for i := range 10 {
		w.submit(t, fmt.Sprint("p", i), float64(i))
	}
	e := NewEngine(Config{})
	key := Key{"t", "b", "all"}
	w.tick(e, key)
	const n = 300
	clients := make([]*client, n)
	subs := make([]*Sub, n)
	for i := range n {
		clients[i] = newClient()
		s, err := e.Subscribe(key, w, clients[i].out, "s", Spec{Kind: Top, Limit: 3}, nil)
		if err != nil {
			t.Fatal(err)
		}
		subs[i] = s
		clients[i].drain(t)
	}
	v := subs[0].v
	stays := map[int]bool{}
	for i := 1; i < n-1 && len(stays) < 20; i += 13 {
		stays[i] = true
	}
	for _, i := range []int{0, n - 1, 0} { // the first twice
		e.Unsubscribe(subs[i])
	}
	for i := range n {
		if !stays[i] {
			e.Unsubscribe(subs[i])
			e.Unsubscribe(subs[i])
		}
	}
	if len(v.watchers) != len(stays) {
		t.Fatalf("%d watchers, want %d", len(v.watchers), len(stays))
	}
	if cap(v.watchers) > 64 && cap(v.watchers) > 4*len(v.watchers) {
		t.Fatalf("the watchers' array kept %d slots for %d", cap(v.watchers), len(v.watchers))
	}
	for j, s := range v.watchers {
		if s.widx != j {
			t.Fatalf("watcher at %d says %d", j, s.widx)
		}
	}
	if got := e.Stats().Subscriptions[Top]; got != len(stays) {
		t.Fatalf("%d subscriptions counted, want %d", got, len(stays))
	}
	w.submit(t, "p0", 1000)
	w.tick(e, key)
	for i, c := range clients {
		before := c.msgs
		c.drain(t)
		got := c.msgs - before
		switch {
		case stays[i] && (got != 1 || c.seq["s"] != w.seq):
			t.Fatalf("watcher %d got %d messages, at seq %d (view at %d)", i, got, c.seq["s"], w.seq)
		case !stays[i] && got != 0:
			t.Fatalf("watcher %d unsubscribed and got %d messages", i, got)
		}
	}
}
