package subscriptions

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rankwire/rankwire/board"
)

func TestDiffRows(t *testing.T) {
	r := func(rank int, h uint32, score float64) Row { return Row{Rank: rank, handle: h, Score: score} }
	tests := []struct {
		name     string
		old, new []Row
		put      []int
		gone     []int
	}{
		{"same", []Row{r(1, 1, 5)}, []Row{r(1, 1, 5)}, nil, nil},
		{"score changed", []Row{r(1, 1, 5)}, []Row{r(1, 1, 6)}, []int{1}, nil},
		{"swap", []Row{r(1, 1, 5), r(2, 2, 4)}, []Row{r(1, 2, 6), r(2, 1, 5)}, []int{1, 2}, nil},
		{"shrink", []Row{r(1, 1, 5), r(2, 2, 4)}, []Row{r(1, 1, 5)}, nil, []int{2}},
		{"grow", nil, []Row{r(3, 1, 5)}, []int{3}, nil},
		{"shift window", []Row{r(4, 1, 5), r(5, 2, 4)}, []Row{r(5, 2, 4), r(6, 3, 3)}, []int{6}, []int{4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			put, gone := diffRows(tt.old, tt.new)
			var got []int
			for _, p := range put {
				got = append(got, p.Rank)
			}
			if !slices.Equal(got, tt.put) || !slices.Equal(gone, tt.gone) {
				t.Errorf("put %v gone %v, want %v %v", got, gone, tt.put, tt.gone)
			}
		})
	}
}

func TestChangeSpan(t *testing.T) {
	tests := []struct {
		name          string
		old, new, tot int
		want          span
		ok            bool
	}{
		{"insert", 0, 3, 10, span{3, 10}, true},
		{"remove", 4, 0, 9, span{4, 10}, true},
		{"up", 7, 2, 10, span{2, 7}, true},
		{"down", 2, 7, 10, span{2, 7}, true},
		{"in place", 5, 5, 10, span{5, 5}, true},
		{"nothing", 0, 0, 10, span{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Change{Total: tt.tot}
			c.OldRank, c.NewRank = tt.old, tt.new
			got, ok := c.span()
			if got != tt.want || ok != tt.ok {
				t.Errorf("span %v %v, want %v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestEncodeMatchesJSON(t *testing.T) {
	b := body{diff: true, seq: 9, prev: 7, total: 3, rows: []Row{{Rank: 1, Member: "a\"b\\c\u00e9", Score: 1e21, Subscore: -0.5}, {Rank: 2, Member: "x", Score: 1e-7, Profile: Profile{Name: "N\"é", Avatar: "https://a/b.png", Country: "MT"}}}, gone: []int{3}}
	got := string(appendBody(nil, b))
	want := `"seq":9,"prev":7,"total":3,"rows":[{"rank":1,"member":"a\"b\\cé","score":1e+21,"subscore":-0.5},{"rank":2,"member":"x","score":1e-07,"subscore":0,"name":"N\"é","avatar":"https://a/b.png","country":"MT"}],"gone":[3]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestBodySizeHoldsAnEncoding wants bodySize to hold the encoding of
// diffs and snapshots with ordinary rows, so that each takes one allocation.
func TestBodySizeHoldsAnEncoding(t *testing.T) {
	rows := []Row{{Rank: 1, Member: "player-000001", Score: 12345.678, Subscore: 3}, {Rank: 100000, Member: "m9", Score: -1e21, Profile: Profile{Name: "Ann", Country: "MT"}, Review: true}}
	for _, b := range []body{{seq: 1 << 40, total: 1e6, rows: rows}, {diff: true, seq: 9, prev: 7, total: 3, rows: rows[1:], gone: []int{99999, 100000}}, {}} {
		if n, size := len(appendBody(nil, b)), bodySize(b); n > size {
			t.Errorf("%+v: encoding %d bytes, bodySize %d", b, n, size)
		}
		if a := testing.AllocsPerRun(10, func() { appendBody(make([]byte, 0, bodySize(b)), b) }); a > 1 {
			t.Errorf("%+v: %v allocations, want 1", b, a)
		}
	}
}

func TestRankIndexVisitsOnlyMet(t *testing.T) {
	ix := rankIndex{}
	a, b := &view{st: state{spans: []span{{1, 10}}}}, &view{st: state{spans: []span{{500, 510}}}}
	ix.add(a, a.st.spans)
	ix.add(b, b.st.spans)
	var met []*view
	ix.visit(span{11, 499}, func(v *view) { met = append(met, v) })
	if len(met) != 0 {
		t.Fatalf("visited %d views for a span meeting none", len(met))
	}
	ix.visit(span{505, 1 << 30}, func(v *view) { met = append(met, v) })
	if len(met) != 1 || met[0] != b {
		t.Fatalf("visited %v, want b", met)
	}
	ix.remove(b, b.st.spans)
	if len(ix) != 1 {
		t.Fatalf("%d buckets left, want 1", len(ix))
	}
}

func TestRankBefore(t *testing.T) {
	// Ranks of five members a..e, then: f inserted at 2, c moved up to 1,
	// a removed. Undo must recover each member's rank before.
	w := newTestWindow(t, board.Config{})
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		w.submit(t, id, float64(100-i*10))
	}
	before := map[string]int{}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		before[id], _ = w.b.Rank(w.handle(id))
	}
	w.pending = nil
	w.submit(t, "f", 95)
	w.submit(t, "c", 200)
	w.remove("a")
	var steps []step
	for _, c := range w.pending {
		steps = append(steps, stepOf(c))
	}
	for id, want := range before {
		now, _ := w.b.Rank(w.handle(id))
		if got := rankBefore(w.handle(id), now, steps); got != want {
			t.Errorf("%s: rank before %d, want %d (now %d)", id, got, want, now)
		}
	}
	if got := totalBefore(w.b.Len(), steps); got != 5 {
		t.Errorf("total before %d, want 5", got)
	}
}

// TestMultiIndexKeepsEachViewOnce files views under one key in the order
// that moves its inline view (one) and its set (more) through every state,
// and checks the key holds each view once and goes when its last leaves.
func TestMultiIndexKeepsEachViewOnce(t *testing.T) {
	m := multiIndex[uint32]{}
	a, b, c := &view{}, &view{}, &view{}
	held := func() map[*view]int {
		got := map[*view]int{}
		m[7].each(func(v *view) { got[v]++ })
		return got
	}
	m.add(7, a)
	m.add(7, a) // twice: still once
	if got := held(); len(got) != 1 || got[a] != 1 {
		t.Fatalf("after a, a: %v", got)
	}
	m.add(7, b)
	m.add(7, c)
	m.add(7, b)
	if got := held(); len(got) != 3 || got[a] != 1 || got[b] != 1 || got[c] != 1 {
		t.Fatalf("after a, b, c: %v", got)
	}
	m.remove(7, a) // the inline one: another takes its place
	if got := held(); len(got) != 2 || got[b] != 1 || got[c] != 1 {
		t.Fatalf("after removing a: %v", got)
	}
	m.remove(7, a) // not held: nothing changes
	m.remove(7, b)
	if kv := m[7]; kv.one != c || kv.more != nil {
		t.Fatalf("after removing a and b: %+v, want c inline and no set kept", kv)
	}
	m.remove(7, c)
	if _, ok := m[7]; ok || len(m) != 0 {
		t.Fatalf("key left after its last view: %v", m)
	}
	m.remove(7, c) // an absent key
}

// TestLoneWatcherSnapshotNotKept: a view's first watcher gets a snapshot
// that the view does not keep (a per-player view would hold it for as long
// as it stands still), a second watcher's is kept for the next, and both
// carry the same bytes.
func TestLoneWatcherSnapshotNotKept(t *testing.T) {
	w := newTestWindow(t, board.Config{})
	for i := range 5 {
		w.submit(t, fmt.Sprint("p", i), float64(i))
	}
	e := NewEngine(Config{})
	key := Key{"t", "b", "all"}
	w.tick(e, key)
	spec := Spec{Kind: Around, Member: "p2", Radius: 1}
	o1, o2 := NewOutbox(0, nil), NewOutbox(0, nil)
	s1, err := e.Subscribe(key, w, o1, "s", spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s1.v.snap != nil {
		t.Fatal("the lone watcher's snapshot is kept by its view")
	}
	if _, err := e.Subscribe(key, w, o2, "s", spec, nil); err != nil {
		t.Fatal(err)
	}
	if s1.v.snap == nil {
		t.Fatal("a second watcher's snapshot is not kept for the next")
	}
	m1, _ := o1.Next()
	m2, _ := o2.Next()
	if a, b := m1.AppendTo(nil), m2.AppendTo(nil); string(a) != string(b) || len(a) == 0 {
		t.Fatalf("first snapshots differ:\n%s\n%s", a, b)
	}
}

// TestResumeEncodesNoSnapshot: a watcher that resumes with a diff gets no
// snapshot encoded for it, not even one the view would keep for others.
func TestResumeEncodesNoSnapshot(t *testing.T) {
	w := newTestWindow(t, board.Config{})
	e := NewEngine(Config{})
	key := Key{"t", "b", "all"}
	spec := Spec{Kind: Top, Limit: 3}
	_, s, since := resumable(t, e, w, key, spec)
	if s.v.snap != nil {
		t.Fatal("the view keeps a snapshot before the resume: the test proves nothing")
	}
	c := newClient()
	if _, err := e.Subscribe(key, w, c.out, "s", spec, &since); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.out.Next(); string(m.AppendTo(nil)[:14]) != `{"type":"diff"` {
		t.Fatalf("resume answered %s, want a diff", m.AppendTo(nil))
	}
	if s.v.snap != nil {
		t.Fatal("a snapshot was encoded for a watcher that resumed with a diff")
	}
}
