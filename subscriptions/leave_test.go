package subscriptions

import (
	"strconv"
	"sync"
	"testing"

	"github.com/rankwire/rankwire/board"
)

// crowd subscribes conns outboxes of perConn subscriptions each, over two
// board-windows and several views, and returns each connection's subs.
func crowd(t testing.TB, e *Engine, conns, perConn int) [][]*Sub {
	t.Helper()
	keys := []Key{{"t", "a", "all"}, {"t", "b", "all"}}
	ws := []*testWindow{newTestWindow(t, board.Config{}), newTestWindow(t, board.Config{})}
	for i := range 50 {
		ws[0].submit(t, "p"+strconv.Itoa(i), float64(i))
		ws[1].submit(t, "p"+strconv.Itoa(i), float64(i))
	}
	out := make([][]*Sub, conns)
	for c := range out {
		o := NewOutbox(0, nil)
		for j := range perConn {
			k := (c + j) % 2
			spec := Spec{Kind: Top, Limit: 1 + (c+j)%3}
			s, err := e.Subscribe(keys[k], ws[k], o, "s"+strconv.Itoa(j), spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			out[c] = append(out[c], s)
		}
	}
	return out
}

// A crowd that leaves at once, each connection from its own goroutine:
// every Leave returns with its own subscriptions gone (none is left to a
// drainer that has returned), and then the views and the counts are exact.
func TestLeaveCrowdAtOnce(t *testing.T) {
	e := NewEngine(Config{})
	conns := crowd(t, e, 500, 3)
	if st := e.Stats(); st.Subscriptions[Top] != 1500 || st.Views != 6 {
		t.Fatalf("before: %+v", st)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, subs := range conns {
		wg.Go(func() {
			<-start
			e.Leave(subs)
			for _, s := range subs {
				if s.widx != -1 {
					t.Error("Leave returned before its subscription was gone")
					return
				}
			}
			e.Leave(subs) // again: a no-op
		})
	}
	close(start)
	wg.Wait()
	if st := e.Stats(); st.Subscriptions[Top] != 0 || st.Views != 0 {
		t.Errorf("after: %+v, want no subscription and no view", st)
	}
	for _, ws := range e.windows {
		if len(ws.views) != 0 || ws.idle.IsZero() {
			t.Errorf("board-window %v: %d views, idle %v", ws.key, len(ws.views), ws.idle)
		}
	}
	if e.leaving.head.Load() != nil || e.leaving.draining.Load() {
		t.Error("the leave stack is not empty, or a drainer still marked")
	}
}

// Leave mixed with Unsubscribe of the same subscriptions ends each once.
func TestLeaveAndUnsubscribeOnce(t *testing.T) {
	e := NewEngine(Config{})
	conns := crowd(t, e, 200, 2)
	var wg sync.WaitGroup
	for _, subs := range conns {
		wg.Go(func() { e.Leave(subs) })
		wg.Go(func() { e.Unsubscribe(subs[0]) })
	}
	wg.Wait()
	if st := e.Stats(); st.Subscriptions[Top] != 0 || st.Views != 0 {
		t.Errorf("after: %+v, want no subscription and no view", st)
	}
}

// BenchmarkCrowdLeaves: b.N connections of 4 subscriptions each, on two
// board-windows, leave at once, each from its own goroutine: by Leave
// (batched) or by one Unsubscribe each (the path before Leave).
func BenchmarkCrowdLeaves(b *testing.B) {
	for _, mode := range []string{"leave", "unsubscribe"} {
		b.Run(mode, func(b *testing.B) {
			e := NewEngine(Config{})
			conns := crowd(b, e, b.N, 4)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for _, subs := range conns {
				wg.Go(func() {
					<-start
					if mode == "leave" {
						e.Leave(subs)
						return
					}
					for _, s := range subs {
						e.Unsubscribe(s)
					}
				})
			}
			b.ResetTimer()
			close(start)
			wg.Wait()
		})
	}
}
