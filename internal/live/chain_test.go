package live

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/subscriptions"
)

// TestWSChainOneWrite: states of a view that reach a connection while its
// writer cannot write wait as a chain (the snapshot, then a diff per
// push), and the writer's next turn sends them all in one socket write;
// the client reads every frame of it whole, in order, each diff's prev
// the seq of the message before it, and ends at the board's state.
func TestWSChainOneWrite(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("a", "weekly", hub.Settings{Policy: "latest"})
	r, c, release := e.rawHeld()
	r.write(appendClientFrame(nil, opText, []byte(`{"type":"subscribe","id":"s","board":"weekly","view":{"kind":"top","limit":10}}`)))
	checkFor(t, 5*time.Second, func() error {
		if n := c.out.Len(); n != 1 {
			return fmt.Errorf("%d messages wait, want the snapshot", n)
		}
		return nil
	})
	for i := 1; i < subscriptions.MaxChain; i++ { // one push per submission: each waits as a diff
		e.submit("a", "weekly", hub.Item{Member: fmt.Sprint("p", i), Score: float64(i)})
		checkFor(t, 5*time.Second, func() error {
			if n := c.out.Len(); n != i+1 {
				return fmt.Errorf("%d messages wait, want %d", n, i+1)
			}
			return nil
		})
	}
	writes, msgs := testutil.ToFloat64(e.p.metrics.writes), testutil.ToFloat64(e.p.metrics.messages)
	release() // the drain ends: the writer's turn takes the chain

	var seq uint64
	state := map[int]string{} // rank → member, as the client applies them
	for i := range subscriptions.MaxChain {
		op, p, err := r.frame()
		if err != nil || op != opText {
			t.Fatalf("frame %d: opcode %d, %v", i, op, err)
		}
		m := decode(t, p) // the whole frame is one JSON message
		switch {
		case i == 0 && m.Type != "snapshot", i > 0 && m.Type != "diff":
			t.Fatalf("frame %d: %s", i, p)
		case i > 0 && (m.Prev == nil || *m.Prev != seq):
			t.Fatalf("frame %d: prev %v after seq %d: %s", i, m.Prev, seq, p)
		}
		for _, g := range m.Gone {
			delete(state, g)
		}
		for _, row := range m.Rows {
			state[row.Rank] = row.Member
		}
		seq = m.Seq
	}
	for rank := 1; rank < subscriptions.MaxChain; rank++ { // p1 … p(MaxChain-1), the last the leader
		if want := fmt.Sprint("p", subscriptions.MaxChain-rank); state[rank] != want || len(state) != subscriptions.MaxChain-1 {
			t.Fatalf("the client holds %v, want %s at rank %d of %d", state, want, rank, subscriptions.MaxChain-1)
		}
	}
	checkFor(t, 5*time.Second, func() error { // the writer counts after its batch of connections
		if n := testutil.ToFloat64(e.p.metrics.messages) - msgs; n < subscriptions.MaxChain {
			return fmt.Errorf("%v messages counted", n)
		}
		return nil
	})
	if got := testutil.ToFloat64(e.p.metrics.writes) - writes; got != 1 {
		t.Fatalf("the chain left in %v writes, want 1", got)
	}
	if n := c.out.Len(); n != 0 {
		t.Fatalf("%d messages still wait", n)
	}
}

// TestStreamChainOneWrite: an event stream's subscription chains its diffs
// as a WebSocket's does: while its socket cannot be written, each push's
// diff waits, and the next turn writes them in one write, each an event
// whose id is its seq and whose prev is the id before it.
func TestStreamChainOneWrite(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("a", "weekly", hub.Settings{})
	e.submit("a", "weekly", hub.Item{Member: "p0", Score: 1})
	s := e.stream("board=weekly&kind=top&limit=10", e.token("a", auth.RoleRead), nil)
	seq := s.msg().Seq // the snapshot
	var c *sseConn
	for _, lc := range e.p.connections() {
		c, _ = lc.(*sseConn)
	}
	if c == nil {
		t.Fatal("the stream is not among the plane's connections")
	}
	release := c.flow.Hold()
	for i := 1; i <= subscriptions.MaxChain; i++ {
		e.submit("a", "weekly", hub.Item{Member: fmt.Sprint("p", i), Score: float64(10 * i)})
		checkFor(t, 5*time.Second, func() error {
			if n := c.out.Len(); n != i {
				return fmt.Errorf("%d messages wait, want %d", n, i)
			}
			return nil
		})
	}
	writes, msgs := testutil.ToFloat64(e.p.metrics.writes), testutil.ToFloat64(e.p.metrics.messages)
	release()
	for i := 1; i <= subscriptions.MaxChain; i++ {
		d := s.msg() // checks the event's id against its seq
		if d.Type != "diff" || d.Prev == nil || *d.Prev != seq || d.Rows[0].Member != fmt.Sprint("p", i) {
			t.Fatalf("event %d: %+v, want p%d's diff from %d", i, d, i, seq)
		}
		seq = d.Seq
	}
	checkFor(t, 5*time.Second, func() error {
		if n := testutil.ToFloat64(e.p.metrics.messages) - msgs; n < subscriptions.MaxChain {
			return fmt.Errorf("%v messages counted", n)
		}
		return nil
	})
	if got := testutil.ToFloat64(e.p.metrics.writes) - writes; got != 1 {
		t.Fatalf("the chain left in %v writes, want 1", got)
	}
}
