package subscriptions

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/board"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the model test; 0 picks one")

// randomSpec returns a small view of a board of up to n members.
func randomSpec(r *rand.Rand, n int) Spec {
	member := func() string { return "m" + strconv.Itoa(r.IntN(n+5)) } // some never exist
	switch Kinds[r.IntN(len(Kinds))] {
	case Top:
		return Spec{Kind: Top, Offset: r.IntN(n), Limit: 1 + r.IntN(8)}
	case Around:
		return Spec{Kind: Around, Member: member(), Radius: r.IntN(4)}
	case Rank:
		return Spec{Kind: Rank, Rank: 1 + r.IntN(n+2)}
	}
	ms := make([]string, 1+r.IntN(5))
	for i := range ms {
		ms[i] = member()
	}
	return Spec{Kind: Members, Members: ms}
}

// TestModel drives random submissions and removals under every policy
// through an Engine watched by clients, some of which read only now and
// then or reconnect with since, and checks after every tick that each
// reading client's state, built from snapshots and diffs, equals the view
// recomputed from the board; every diff's prev must equal the last seq.
func TestModel(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed)", seed)
	for _, p := range []board.Policy{board.Best, board.Latest, board.Sum, board.First} {
		t.Run(p.String(), func(t *testing.T) { runModel(t, rand.New(rand.NewPCG(seed, uint64(p))), p) })
	}
}

type modelSub struct {
	c    *client
	sub  *Sub
	spec Spec
}

func runModel(t *testing.T, r *rand.Rand, p board.Policy) {
	const n = 40
	w := newTestWindow(t, board.Config{Policy: p})
	e := NewEngine(Config{RingSize: 64})
	key := Key{"t", "b", "all"}
	var subs []*modelSub
	for i := range 30 {
		ms := &modelSub{c: newClient(), spec: randomSpec(r, n)}
		ms.sub, _ = e.Subscribe(key, w, ms.c.out, "s"+strconv.Itoa(i), ms.spec, nil)
		subs = append(subs, ms)
	}
	for tick := range 300 {
		for range r.IntN(6) {
			id := "m" + strconv.Itoa(r.IntN(n))
			if r.IntN(10) == 0 {
				w.remove(id)
			} else {
				w.submit(t, id, float64(r.IntN(50)))
			}
		}
		w.tick(e, key)
		for i, ms := range subs {
			if n := ms.c.out.Len(); n > MaxChain {
				t.Fatalf("sub %d: %d messages wait, want at most MaxChain (%d) per subscription", i, n, MaxChain)
			}
			if i%3 == 2 && r.IntN(4) != 0 {
				continue // a slow client: reads one tick in four
			}
			if i%5 == 4 && r.IntN(10) == 0 {
				reconnect(t, e, w, key, ms, r)
			}
			ms.c.drain(t)
			id := ms.sub.ID()
			want := rowsOf(compute(ms.spec.normalize(), w).rows)
			if !sameRows(ms.c.state[id], want) {
				t.Fatalf("tick %d sub %s %+v: client holds %v, view is %v", tick, id, ms.spec, ms.c.state[id], want)
			}
		}
	}
}

// reconnect ends ms's subscription, lets a few changes pass, and
// subscribes again with since, sometimes before those changes reached the
// engine (the ring then needs the window's pending changes), then ticks:
// the client's old state plus its messages must equal the view.
func reconnect(t *testing.T, e *Engine, w *testWindow, key Key, ms *modelSub, r *rand.Rand) {
	ms.c.drain(t)
	e.Unsubscribe(ms.sub)
	since := ms.c.seq[ms.sub.ID()]
	for range r.IntN(3) {
		w.submit(t, "m"+strconv.Itoa(r.IntN(40)), float64(r.IntN(50)))
	}
	early := r.IntN(2) == 0
	if early {
		w.tick(e, key)
	}
	var err error
	ms.sub, err = e.Subscribe(key, w, ms.c.out, ms.sub.ID(), ms.spec, &since)
	if err != nil {
		t.Fatal(err)
	}
	if !early {
		w.tick(e, key)
	}
}

// TestResumeDiffs checks that a resume within the ring answers a diff whose
// prev is since, and one past it a snapshot.
func TestResumeDiffs(t *testing.T) {
	w := newTestWindow(t, board.Config{})
	e := NewEngine(Config{RingSize: 8})
	key := Key{"t", "b", "all"}
	spec := Spec{Kind: Top, Limit: 3}
	keep, _, since := resumable(t, e, w, key, spec)

	c := newClient()
	c.state["s"], c.seq["s"] = keep.state["keep"], since
	e.Subscribe(key, w, c.out, "s", spec, &since)
	m, _ := c.out.Next()
	raw := m.AppendTo(nil)
	c.apply(t, raw)
	if want := rowsOf(compute(spec, w).rows); !sameRows(c.state["s"], want) {
		t.Fatalf("after resume %s: %v, want %v", raw, c.state["s"], want)
	}
	if c.msgs != 1 || string(raw[:14]) != `{"type":"diff"` {
		t.Fatalf("resume answered %s, want a diff", raw)
	}
	for i := range 20 {
		w.submit(t, fmt.Sprint("q", i), float64(200+i))
	}
	w.tick(e, key)
	c2 := newClient()
	e.Subscribe(key, w, c2.out, "s", spec, &since)
	m, _ = c2.out.Next()
	if raw := m.AppendTo(nil); string(raw[:18]) != `{"type":"snapshot"` {
		t.Fatalf("resume past the ring answered %s, want a snapshot", raw)
	}
}

// TestReplacedPendingIsADiff: a slow client whose pending message is
// replaced gets a diff from the last message its writer took, where the
// ring still reaches it, and a snapshot where it does not.
func TestReplacedPendingIsADiff(t *testing.T) {
	w := newTestWindow(t, board.Config{})
	e := NewEngine(Config{RingSize: 8})
	key := Key{"t", "b", "all"}
	c := newClient()
	spec := Spec{Kind: Top, Limit: 10}
	for i := range 20 {
		w.submit(t, fmt.Sprint("p", i), float64(i)) // p19 leads, p10 is 10th
	}
	w.tick(e, key)
	e.Subscribe(key, w, c.out, "s", spec, nil)
	c.drain(t)
	taken := c.seq["s"]
	for i := range MaxChain + 1 { // ticks the client does not read: a full chain, replaced by one message
		w.submit(t, "p10", 10+float64(i+1)/10) // the 10th row changes, nothing else
		w.tick(e, key)
	}
	m, _ := c.out.Next()
	raw := m.AppendTo(nil)
	if string(raw[:14]) != `{"type":"diff"` || !strings.Contains(string(raw), fmt.Sprintf(`"prev":%d`, taken)) {
		t.Fatalf("replaced message %s, want a diff from seq %d", raw, taken)
	}
	c.apply(t, raw)
	if want := rowsOf(compute(spec, w).rows); !sameRows(c.state["s"], want) {
		t.Fatalf("after the catch-up diff: %v, want %v", c.state["s"], want)
	}
	if _, more := c.out.Next(); more {
		t.Fatal("a second message waits")
	}

	// Every row of the view changing: the diff would be longer than the
	// snapshot, which goes instead.
	for i := range MaxChain + 1 {
		w.submit(t, fmt.Sprint("r", i), float64(100+i))
		w.tick(e, key)
	}
	m, _ = c.out.Next()
	if raw := m.AppendTo(nil); string(raw[:18]) != `{"type":"snapshot"` {
		t.Fatalf("replaced message with every row new: %s, want the snapshot", raw)
	}
	c.drain(t)

	for i := range 12 { // more changes than the ring keeps
		w.submit(t, fmt.Sprint("q", i), float64(200+i))
		w.tick(e, key)
	}
	m, _ = c.out.Next()
	if raw := m.AppendTo(nil); string(raw[:18]) != `{"type":"snapshot"` {
		t.Fatalf("replaced message past the ring: %s, want a snapshot", raw)
	}
}
