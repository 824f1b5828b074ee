package ledger

import "testing"

// TestFeedDeleted: a delete's batches say Deleted (and Reset) for every
// window the board had and for its all window where it had none; the
// window then reads Gen 0. A board made again under the name within the
// same tick keeps Deleted on the batch, reads a new Gen, and its seq may
// pass the old one's: only Deleted and Gen tell it from the old board.
// A reset says Reset, never Deleted.
func TestFeedDeleted(t *testing.T) {
	s := New()
	s.RecordFeed()
	s.Apply(1, &Event{Kind: EvSettings, Board: "empty", Settings: mustNormalize(t, Settings{})})
	s.Apply(2, &Event{Kind: EvSettings, Board: "b", Settings: mustNormalize(t, Settings{})})
	s.Apply(3, &Event{Kind: EvSubmit, Board: "b", Items: []Item{{Member: "m1", Score: 1}, {Member: "m2", Score: 2}}})
	take := func() map[string]FeedBatch {
		got := map[string]FeedBatch{}
		s.TakeFeed(func(b FeedBatch, w Window) {
			got[b.Board+"/"+b.Window] = b
			if b.Deleted && s.boards[b.Board] == nil && w.Gen() != 0 {
				t.Errorf("%s/%s: Gen %d after its delete, want 0", b.Board, b.Window, w.Gen())
			}
		})
		return got
	}
	take()
	oldGen := s.windowOf(feedKey{"b", windowKey{kindAll, 0}}).Gen()
	s.Apply(4, &Event{Kind: EvReset, Board: "b"})
	if got := take()["b/all"]; !got.Reset || got.Deleted {
		t.Fatalf("a reset's batch: %+v, want Reset and not Deleted", got)
	}
	s.Apply(5, &Event{Kind: EvSubmit, Board: "b", Items: []Item{{Member: "m1", Score: 1}}})
	take()
	s.Apply(6, &Event{Kind: EvDelete, Board: "empty"})
	if got := take(); !got["empty/all"].Deleted || !got["empty/all"].Reset || len(got) != 1 {
		t.Fatalf("a board with no window: %+v, want one batch of its all window that says Deleted", got)
	}
	s.Apply(7, &Event{Kind: EvDelete, Board: "b"})
	s.Apply(8, &Event{Kind: EvSettings, Board: "b", Settings: mustNormalize(t, Settings{})})
	items := make([]Item, 6)
	for i := range items {
		items[i] = Item{Member: string(rune('a' + i)), Score: float64(i)}
	}
	s.Apply(9, &Event{Kind: EvSubmit, Board: "b", Items: items})
	var w Window
	var got FeedBatch
	s.TakeFeed(func(b FeedBatch, win Window) { got, w = b, win })
	if !got.Deleted || !got.Reset || len(got.Changes) != len(items) {
		t.Fatalf("deleted and made again in a tick: %+v, want Deleted, Reset and the new board's changes", got)
	}
	if w.Gen() == 0 || w.Gen() == oldGen || w.Seq() <= 4 {
		t.Fatalf("the new board: Gen %d (old %d), seq %d: want a new Gen and a seq past the old board's", w.Gen(), oldGen, w.Seq())
	}
}

// TestGenAcrossStates: a State decoded from a snapshot (a rebuild that
// replaces the live one) never gives a board deleted and made again the
// Gen the replaced State's board of that name had, which live views were
// made under (a count of the boards each State made did: x1 and x2, gone
// by the snapshot, counted in the live State only); and two States that
// applied the same events from before the board was made agree on the new
// board's Gen.
func TestGenAcrossStates(t *testing.T) {
	live := New()
	for seq, ev := range []Event{
		{Kind: EvSettings, Board: "x1"}, {Kind: EvSettings, Board: "x2"},
		{Kind: EvDelete, Board: "x1"}, {Kind: EvDelete, Board: "x2"},
		{Kind: EvSettings, Board: "b"}, {Kind: EvSettings, Board: "y"},
	} {
		if ev.Kind == EvSettings {
			ev.Settings = mustNormalize(t, Settings{})
		}
		live.Apply(uint64(seq+1), &ev)
	}
	gen := func(s *State) uint64 { return s.windowOf(feedKey{"b", windowKey{kindAll, 0}}).Gen() }
	old := gen(live)
	snap, err := live.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, err := Decode(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*State{live, rebuilt} {
		s.Apply(7, &Event{Kind: EvDelete, Board: "b"})
		s.Apply(8, &Event{Kind: EvSettings, Board: "b", Settings: mustNormalize(t, Settings{})})
	}
	if b := gen(rebuilt); b == old || b == 0 {
		t.Fatalf("b made again in the rebuilt State: Gen %d, the deleted board's was %d: want a new, non-zero one", b, old)
	}
	if a, b := gen(live), gen(rebuilt); a != b {
		t.Fatalf("b made again: Gen %d replayed, %d rebuilt: want equal", a, b)
	}
}
