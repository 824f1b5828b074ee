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
