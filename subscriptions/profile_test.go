package subscriptions

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/board"
)

// A profile change comes as a change of the member at its own rank: every
// view that shows the member (positional or by member) sends its row again
// with the new profile, and a view that does not show it sends nothing.
func TestProfileChangeReachesViewsShowingTheMember(t *testing.T) {
	w := newTestWindow(t, board.Config{})
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		w.submit(t, id, float64(100-i)) // a is rank 1 ... e rank 5
	}
	w.pending = nil
	e := NewEngine(Config{})
	key := Key{"t", "b", "all"}
	specs := map[string]Spec{
		"top2":    {Kind: Top, Limit: 2},
		"top3":    {Kind: Top, Limit: 3, Offset: 2}, // ranks 3..5
		"rank3":   {Kind: Rank, Rank: 3},
		"around":  {Kind: Around, Member: "d", Radius: 1}, // ranks 3..5
		"friends": {Kind: Members, Members: []string{"c", "a"}},
		"others":  {Kind: Members, Members: []string{"e"}},
	}
	out := map[string]*Outbox{}
	for id, spec := range specs {
		out[id] = NewOutbox(0, nil)
		if _, err := e.Subscribe(key, w, out[id], id, spec, nil); err != nil {
			t.Fatal(err)
		}
		out[id].Next() // the snapshot
	}
	c := w.handle("c")
	w.profiles = map[uint32]Profile{c: {Name: "Ceecee", Country: "MT"}}
	row, _ := w.b.Get(c)
	w.note(board.Change{Member: c, OldRank: row.Rank, NewRank: row.Rank, Old: row.Entry, New: row.Entry, Applied: true})
	w.tick(e, key)
	for id := range specs {
		m, ok := out[id].Next()
		want := id != "top2" && id != "others"
		if ok != want {
			t.Fatalf("%s: got a message %v, want %v", id, ok, want)
		}
		if !ok {
			continue
		}
		var got msg
		raw := m.AppendTo(nil)
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if got.Type != "diff" || len(got.Rows) != 1 || got.Rows[0].Rank != 3 || !strings.Contains(string(raw), `"member":"c","score":98,"subscore":0,"name":"Ceecee","country":"MT"}`) {
			t.Fatalf("%s: %s, want a diff of rank 3 with c's profile", id, raw)
		}
	}
}
