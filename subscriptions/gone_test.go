package subscriptions

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/rankwire/rankwire/board"
)

// goneMsg is the error EndBoard's tests give: what follows the id.
const goneMsg = `"code":"not_found","message":"board: \"weekly\" was deleted"}`

// everyKind is one spec of each view kind over players p0…p4.
var everyKind = map[string]Spec{
	"top":     {Kind: Top, Limit: 3},
	"around":  {Kind: Around, Member: "p2", Radius: 1},
	"rank":    {Kind: Rank, Rank: 1},
	"members": {Kind: Members, Members: []string{"p1", "p4"}},
}

// takeAll returns the JSON of every message waiting in out.
func takeAll(out *Outbox) []string {
	var got []string
	for {
		m, ok := out.Next()
		if !ok {
			return got
		}
		got = append(got, string(m.AppendTo(nil)))
	}
}

// TestEndBoardEveryKind: a deleted board's watchers of every kind, over two
// windows, and a held resume get the error as their last message and are
// gone; the same connection's view of another board, and a twin tenant's
// view of a board of the same name, go on untouched.
func TestEndBoardEveryKind(t *testing.T) {
	e := NewEngine(Config{})
	weekly, week, daily, twin := Key{"a", "weekly", "all"}, Key{"a", "weekly", "week:2026-11-23"}, Key{"a", "daily", "all"}, Key{"b", "weekly", "all"}
	ws := map[Key]*testWindow{}
	for _, k := range []Key{weekly, week, daily, twin} {
		ws[k] = newTestWindow(t, board.Config{})
		for i := range 5 {
			ws[k].submit(t, fmt.Sprint("p", i), float64(i))
		}
		ws[k].tick(e, k)
	}
	c, other := NewOutbox(0, nil), NewOutbox(0, nil)
	var subs []*Sub
	for name, spec := range everyKind {
		for _, k := range []Key{weekly, week} {
			s, err := e.Subscribe(k, ws[k], c, name+"@"+k.Window, spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			subs = append(subs, s)
		}
		if _, err := e.Subscribe(twin, ws[twin], other, name, spec, nil); err != nil {
			t.Fatal(err)
		}
	}
	d, _ := e.Subscribe(daily, ws[daily], c, "d", Spec{Kind: Top, Limit: 3}, nil)
	since := ws[weekly].seq + 5 // a resume from a gateway ahead: held
	held, _ := e.Subscribe(weekly, ws[weekly], c, "held", Spec{Kind: Top, Limit: 3}, &since)
	subs = append(subs, held)
	takeAll(c)
	takeAll(other)
	ws[weekly].submit(t, "p9", 99) // a diff waits when the delete comes: the error replaces it
	e.Apply(weekly, ws[weekly], ws[weekly].pending, false)
	e.Flush()

	if n := e.EndBoard("a", "weekly", 0, []byte(goneMsg)); n != len(subs) {
		t.Fatalf("EndBoard ended %d, want %d", n, len(subs))
	}
	got := map[string]string{}
	for _, m := range takeAll(c) {
		var id struct{ ID string }
		if err := json.Unmarshal([]byte(m), &id); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if _, dup := got[id.ID]; dup {
			t.Fatalf("two messages for %s: %s after %s", id.ID, m, got[id.ID])
		}
		got[id.ID] = m
	}
	for _, s := range subs {
		want := `{"type":"error","id":"` + s.ID() + `",` + goneMsg
		if got[s.ID()] != want || !s.Ended() {
			t.Fatalf("%s: got %q (ended %v), want %q", s.ID(), got[s.ID()], s.Ended(), want)
		}
		select {
		case <-e.Ready(s):
		default:
			t.Fatalf("%s: Ready still open after its end", s.ID())
		}
	}
	if len(got) != len(subs) || d.Ended() {
		t.Fatalf("messages %v: want the %d ends only; daily ended %v", got, len(subs), d.Ended())
	}
	if st := e.Stats(); st.Held != 0 || st.Views != 1+len(everyKind) {
		t.Fatalf("after the end: %+v, want daily's view and the twin's, none held", st)
	}
	// Later ticks of the deleted board (a board made again under the name)
	// reach none of them; daily and the twin go on.
	for _, k := range []Key{weekly, daily, twin} {
		ws[k].submit(t, "p8", 1000)
		ws[k].tick(e, k)
	}
	if after := takeAll(c); len(after) != 1 || !json.Valid([]byte(after[0])) || after[0][:23] != `{"type":"diff","id":"d"` {
		t.Fatalf("after the end, the connection got %q: want daily's diff only", after)
	}
	if n := len(takeAll(other)); n != len(everyKind) {
		t.Fatalf("the twin tenant's views got %d messages, want a diff each (%d)", n, len(everyKind))
	}
	e.Unsubscribe(subs[0]) // the owner's own end after the engine's: nothing
	e.Leave(subs[1:2])
}

// TestEndBoardMadeAgain: a board deleted and made again within one tick
// (its batch says Deleted; its Window is the new board's, whose seq may
// pass the old one's) ends the watchers of the old board, with no diff
// from their chain, and spares one that subscribed to the new board
// before the tick.
func TestEndBoardMadeAgain(t *testing.T) {
	e := NewEngine(Config{})
	key := Key{"a", "weekly", "all"}
	old := newTestWindow(t, board.Config{})
	for i := range 5 {
		old.submit(t, fmt.Sprint("p", i), float64(i))
	}
	old.tick(e, key)
	c := newClient()
	if _, err := e.Subscribe(key, old, c.out, "old", Spec{Kind: Top, Limit: 3}, nil); err != nil {
		t.Fatal(err)
	}
	c.drain(t)
	made := newTestWindow(t, board.Config{}) // deleted, made again: seq past the old one's
	made.gen = 2
	for i := range 9 {
		made.submit(t, fmt.Sprint("q", i), float64(i))
	}
	fresh := newClient()
	s, err := e.Subscribe(key, made, fresh.out, "new", Spec{Kind: Top, Limit: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fresh.drain(t) // its first snapshot: the new board's rows, never the old view's
	if !sameRows(fresh.state["new"], map[int]string{1: "q8 8 0", 2: "q7 7 0", 3: "q6 6 0"}) {
		t.Fatalf("a watcher of the board made again starts from %v", fresh.state["new"])
	}
	if n := e.EndBoard("a", "weekly", made.Gen(), []byte(goneMsg)); n != 1 {
		t.Fatalf("EndBoard ended %d, want the old board's one", n)
	}
	e.Apply(key, made, nil, true)
	e.Flush()
	got := takeAll(c.out)
	if want := `{"type":"error","id":"old",` + goneMsg; len(got) != 1 || got[0] != want {
		t.Fatalf("the old board's watcher got %q, want its end only", got)
	}
	fresh.drain(t)
	if s.Ended() || !sameRows(fresh.state["new"], map[int]string{1: "q8 8 0", 2: "q7 7 0", 3: "q6 6 0"}) {
		t.Fatalf("the new board's watcher: ended %v, rows %v", s.Ended(), fresh.state["new"])
	}
}

// TestEndBoardNone: a board nobody watches ends nothing, and a second
// EndBoard of the same tick ends nothing more.
func TestEndBoardNone(t *testing.T) {
	e := NewEngine(Config{})
	if n := e.EndBoard("a", "weekly", 0, []byte(goneMsg)); n != 0 {
		t.Fatalf("ended %d of an unwatched board", n)
	}
	w := newTestWindow(t, board.Config{})
	key := Key{"a", "weekly", "all"}
	if _, err := e.Subscribe(key, w, NewOutbox(0, nil), "s", Spec{Kind: Top, Limit: 3}, nil); err != nil {
		t.Fatal(err)
	}
	if a, b := e.EndBoard("a", "weekly", 0, []byte(goneMsg)), e.EndBoard("a", "weekly", 0, []byte(goneMsg)); a != 1 || b != 0 {
		t.Fatalf("ended %d then %d, want 1 then 0", a, b)
	}
}

// TestResumeBoardMadeAgainInGap: a resume with since to a board deleted
// and made again within one tick, before that tick's Apply, while the
// board-window still holds the deleted board's ring and seq, gets a fresh
// snapshot of the new board at its own seq: never a diff from the old
// board's ring (its changes are another board's, under the same seqs), nor
// a snapshot labelled with a seq the new board has not reached. The new
// board's seq past the old one's (a since within both), and short of it (a
// since between them).
func TestResumeBoardMadeAgainInGap(t *testing.T) {
	for _, tc := range []struct {
		name          string
		oldN, madeN   int
		since         uint64
		wantSeq       uint64
		wantTopMember string
	}{
		{"past", 5, 9, 3, 9, "q8 8 0"},
		{"short", 9, 3, 5, 3, "q2 2 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine(Config{})
			key := Key{"a", "weekly", "all"}
			old := newTestWindow(t, board.Config{})
			c := newClient()
			if _, err := e.Subscribe(key, old, c.out, "old", Spec{Kind: Top, Limit: 3}, nil); err != nil {
				t.Fatal(err)
			}
			for i := range tc.oldN {
				old.submit(t, fmt.Sprint("p", i), float64(i))
			}
			old.tick(e, key) // the ring reaches back to 0: any since is within it
			made := newTestWindow(t, board.Config{})
			made.gen = 2
			for i := range tc.madeN {
				made.submit(t, fmt.Sprint("q", i), float64(i))
			}
			since := tc.since
			r := newClient()
			s, err := e.Subscribe(key, made, r.out, "r", Spec{Kind: Top, Limit: 3}, &since)
			if err != nil {
				t.Fatal(err)
			}
			m, ok := r.out.Next()
			if !ok {
				t.Fatal("the resume got nothing (held)")
			}
			var got msg
			if err := json.Unmarshal(m.AppendTo(nil), &got); err != nil {
				t.Fatal(err)
			}
			if got.Type != "snapshot" || got.Seq != tc.wantSeq || len(got.Rows) != 3 ||
				fmt.Sprintf("%s %v %v", got.Rows[0].Member, got.Rows[0].Score, got.Rows[0].Subscore) != tc.wantTopMember {
				t.Fatalf("resume from %d got %s: want the new board's snapshot at %d", since, m.AppendTo(nil), tc.wantSeq)
			}
			// The tick: the old watcher ends, the resumed one goes on from
			// the new board.
			if n := e.EndBoard("a", "weekly", made.Gen(), []byte(goneMsg)); n != 1 || s.Ended() {
				t.Fatalf("EndBoard ended %d (resumed ended: %v), want the old board's one", n, s.Ended())
			}
			e.Apply(key, made, made.pending, true)
			made.pending = nil
			e.Flush()
			r.apply(t, m.AppendTo(nil))
			made.submit(t, "q100", 100)
			made.tick(e, key)
			r.drain(t)
			if r.state["r"][1] != "q100 100 0" || r.seq["r"] != tc.wantSeq+1 {
				t.Fatalf("after the tick the resumed one holds %v at %d", r.state["r"], r.seq["r"])
			}
		})
	}
}
