package ledger

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func date(y, m, d int) time.Time { return time.Date(y, time.Month(m), d, 12, 0, 0, 0, time.UTC) }

// TestApplyGroups applies one group-committed event: each group keeps its
// own results and error, and idempotency ids are seen across groups in
// order, as within one batch.
func TestApplyGroups(t *testing.T) {
	s := New()
	s.Apply(1, &Event{Kind: EvSettings, Board: "b", Settings: mustNormalize(t, Settings{Policy: "sum"})})
	out := s.Apply(2, &Event{Kind: EvGroup, At: date(2026, 1, 1).UnixMilli(), Groups: []Group{
		{Board: "b", Items: []Item{{Member: "x", Score: 2, ID: "i1"}, {Member: "x", Score: 2, ID: "i1"}}},
		{Board: "gone", Items: []Item{{Member: "y", Score: 1}}},
		{Board: "b", Items: []Item{{Member: "x", Score: 2, ID: "i1"}, {Member: "y", Score: 5}}},
	}})
	if len(out.Groups) != 3 || out.Err != nil {
		t.Fatalf("outcome %+v", out)
	}
	g0, g1, g2 := out.Groups[0], out.Groups[1], out.Groups[2]
	if g0.Err != nil || g0.Results[0].Duplicate || !g0.Results[1].Duplicate || g0.Results[1].Score != 2 {
		t.Errorf("group 0 = %+v", g0)
	}
	if !errors.Is(g1.Err, ErrNotFound) || g1.Results != nil {
		t.Errorf("group 1 = %+v, want ErrNotFound", g1)
	}
	if g2.Err != nil || !g2.Results[0].Duplicate || g2.Results[1].Rank != 1 || g2.Results[1].Seq != 2 {
		t.Errorf("group 2 = %+v", g2)
	}
}

func mustNormalize(t *testing.T, s Settings) *Settings {
	t.Helper()
	n, err := s.normalize()
	if err != nil {
		t.Fatal(err)
	}
	return &n
}

// TestApplySlices applies a large batch with a yield hook that plays the
// reader between slices: every pause falls after a whole item, and the
// feed's pending changes then agree with the board (last change's seq and
// total are the window's).
func TestApplySlices(t *testing.T) {
	s := New()
	s.feed = newFeedLog()
	s.Apply(1, &Event{Kind: EvSettings, Board: "b", Settings: mustNormalize(t, Settings{})})
	items := make([]Item, 300)
	for i := range items {
		items[i] = Item{Member: fmt.Sprintf("m%d", i), Score: float64(i)}
	}
	pauses := 0
	s.yield = func() {
		pauses++
		w := s.boards["b"].windows[windowKey{kindAll, 0}]
		for _, p := range s.feed.take() {
			last := p.changes[len(p.changes)-1]
			if last.Seq != w.seq || last.Total != w.b.Len() {
				t.Fatalf("pause %d: feed at seq %d total %d, window at %d, %d", pauses, last.Seq, last.Total, w.seq, w.b.Len())
			}
		}
		if err := w.b.Check(); err != nil {
			t.Fatal(err)
		}
	}
	out := s.Apply(2, &Event{Kind: EvGroup, Groups: []Group{{Board: "b", Items: items[:100]}, {Board: "b", Items: items[100:]}}})
	if want := len(items) / applySlice; pauses != want {
		t.Fatalf("%d pauses, want %d", pauses, want)
	}
	if r := out.Groups[1].Results[199]; r.Rank != 1 || r.Seq != 300 {
		t.Fatalf("last result %+v", r)
	}
}
