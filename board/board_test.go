package board

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func mustNew(t *testing.T, cfg Config) *Board {
	t.Helper()
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustSubmit(t *testing.T, b *Board, s Submission) Change {
	t.Helper()
	c, err := b.Submit(s)
	if err != nil {
		t.Fatalf("Submit(%+v): %v", s, err)
	}
	if err := b.Check(); err != nil {
		t.Fatalf("after Submit(%+v): %v", s, err)
	}
	return c
}

// TestPolicies submits two scores for one member under each policy and
// checks the entry kept, whether the policy took the second, and the ranks.
func TestPolicies(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		second  Submission
		want    Entry
		applied bool
	}{
		{"best keeps higher", Config{Policy: Best}, Submission{1, 50, 0, 2}, Entry{1, 100, 0, 1}, false},
		{"best takes higher", Config{Policy: Best}, Submission{1, 150, 0, 2}, Entry{1, 150, 0, 2}, true},
		{"best equal keeps time", Config{Policy: Best}, Submission{1, 100, 0, 2}, Entry{1, 100, 0, 1}, false},
		{"best subscore breaks tie", Config{Policy: Best}, Submission{1, 100, 1, 2}, Entry{1, 100, 1, 2}, true},
		{"best asc takes lower", Config{Policy: Best, Order: Asc}, Submission{1, 50, 0, 2}, Entry{1, 50, 0, 2}, true},
		{"best asc subscore", Config{Policy: Best, SubscoreOrder: Asc}, Submission{1, 100, -1, 2}, Entry{1, 100, -1, 2}, true},
		{"latest overwrites down", Config{Policy: Latest}, Submission{1, 50, 0, 2}, Entry{1, 50, 0, 2}, true},
		{"latest same score keeps time", Config{Policy: Latest}, Submission{1, 100, 0, 2}, Entry{1, 100, 0, 1}, true},
		{"sum adds", Config{Policy: Sum}, Submission{1, 5, 2, 2}, Entry{1, 105, 2, 2}, true},
		{"sum negative", Config{Policy: Sum}, Submission{1, -200, 0, 2}, Entry{1, -100, 0, 2}, true},
		{"sum zero keeps time", Config{Policy: Sum}, Submission{1, 0, 0, 2}, Entry{1, 100, 0, 1}, true},
		{"first keeps first", Config{Policy: First}, Submission{1, 500, 0, 2}, Entry{1, 100, 0, 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustNew(t, tt.cfg)
			mustSubmit(t, b, Submission{Member: 1, Score: 100, Seq: 1})
			c := mustSubmit(t, b, tt.second)
			if c.New != tt.want || c.Applied != tt.applied {
				t.Errorf("change %+v, want entry %+v applied %v", c, tt.want, tt.applied)
			}
			if c.OldRank != 1 || c.NewRank != 1 {
				t.Errorf("ranks %d → %d, want 1 → 1", c.OldRank, c.NewRank)
			}
		})
	}
}

// TestOrder checks the total order: score, subscore, reached-at sequence,
// then member.
func TestOrder(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		subs []Submission
		want []uint32 // members in rank order
	}{
		{"desc score", Config{}, []Submission{{1, 10, 0, 1}, {2, 30, 0, 2}, {3, 20, 0, 3}}, []uint32{2, 3, 1}},
		{"asc score", Config{Order: Asc}, []Submission{{1, 10, 0, 1}, {2, 30, 0, 2}, {3, 20, 0, 3}}, []uint32{1, 3, 2}},
		{"negative scores", Config{}, []Submission{{1, -1, 0, 1}, {2, -0.5, 0, 2}, {3, 0, 0, 3}}, []uint32{3, 2, 1}},
		{"subscore desc", Config{}, []Submission{{1, 10, 1, 1}, {2, 10, 3, 2}}, []uint32{2, 1}},
		{"subscore asc", Config{SubscoreOrder: Asc}, []Submission{{1, 10, 1, 1}, {2, 10, 3, 2}}, []uint32{1, 2}},
		{"earliest first", Config{}, []Submission{{2, 10, 0, 1}, {1, 10, 0, 2}}, []uint32{2, 1}},
		{"latest first", Config{Tiebreak: LatestFirst}, []Submission{{2, 10, 0, 1}, {1, 10, 0, 2}}, []uint32{1, 2}},
		{"same seq by member", Config{}, []Submission{{3, 10, 0, 1}, {1, 10, 0, 1}, {2, 10, 0, 1}}, []uint32{1, 2, 3}},
		{"same seq by names", Config{CompareMembers: nameOrder}, []Submission{{9, 10, 0, 1}, {10, 10, 0, 1}}, []uint32{10, 9}},
		{"minus zero ties zero", Config{}, []Submission{{1, 0, 0, 1}, {2, math.Copysign(0, -1), 0, 2}}, []uint32{1, 2}},
		{"extremes", Config{}, []Submission{{1, -math.MaxFloat64, 0, 1}, {2, math.MaxFloat64, 0, 2}, {3, math.SmallestNonzeroFloat64, 0, 3}}, []uint32{2, 3, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustNew(t, tt.cfg)
			for _, s := range tt.subs {
				mustSubmit(t, b, s)
			}
			var got []uint32
			for _, r := range b.Range(0, 10, nil) {
				got = append(got, r.Member)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("order %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMinusZeroStoredAsZero(t *testing.T) {
	b := mustNew(t, Config{})
	c := mustSubmit(t, b, Submission{Member: 1, Score: math.Copysign(0, -1), Subscore: math.Copysign(0, -1)})
	if math.Signbit(c.New.Score) || math.Signbit(c.New.Subscore) {
		t.Errorf("change reports -0: %+v", c.New)
	}
	r, _ := b.Get(1)
	if math.Signbit(r.Score) || math.Signbit(r.Subscore) {
		t.Errorf("entry holds -0: %+v", r)
	}
}

// TestChangeRanks checks the old and new ranks every mutation reports.
func TestChangeRanks(t *testing.T) {
	b := mustNew(t, Config{Policy: Latest})
	for m := uint32(1); m <= 5; m++ {
		c := mustSubmit(t, b, Submission{Member: m, Score: float64(m * 10), Seq: uint64(m)})
		if c.OldRank != 0 || c.NewRank != 1 {
			t.Fatalf("insert of %d: ranks %d → %d, want 0 → 1", m, c.OldRank, c.NewRank)
		}
	}
	// Ranks now: 5 4 3 2 1. Member 1 climbs from 5 to 2.
	if c := mustSubmit(t, b, Submission{Member: 1, Score: 45, Seq: 6}); c.OldRank != 5 || c.NewRank != 2 {
		t.Errorf("climb: ranks %d → %d, want 5 → 2", c.OldRank, c.NewRank)
	}
	// A move that keeps its place is written in place.
	if c := mustSubmit(t, b, Submission{Member: 1, Score: 44, Seq: 7}); c.OldRank != 2 || c.NewRank != 2 || c.Old.Score != 45 {
		t.Errorf("in place: %+v", c)
	}
	c, ok := b.Remove(4)
	if !ok || c.OldRank != 3 || c.NewRank != 0 {
		t.Errorf("remove: %+v %v, want rank 3 → 0", c, ok)
	}
	if _, ok := b.Remove(4); ok {
		t.Error("second remove reported an entry")
	}
	if err := b.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestMerge checks an identity merge under each policy.
func TestMerge(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want Entry
	}{
		{"best", Config{Policy: Best}, Entry{1, 30, 0, 2}},
		{"latest", Config{Policy: Latest}, Entry{1, 30, 0, 2}},
		{"first", Config{Policy: First}, Entry{1, 20, 0, 1}},
		{"sum", Config{Policy: Sum}, Entry{1, 50, 0, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustNew(t, tt.cfg)
			mustSubmit(t, b, Submission{Member: 1, Score: 20, Seq: 1})
			mustSubmit(t, b, Submission{Member: 2, Score: 30, Seq: 2})
			mustSubmit(t, b, Submission{Member: 3, Score: 25, Seq: 3})
			gone, kept, err := b.Merge(1, 2, 9)
			if err != nil {
				t.Fatal(err)
			}
			if gone.Member != 2 || gone.OldRank != 1 || gone.NewRank != 0 {
				t.Errorf("gone %+v", gone)
			}
			if kept.New != tt.want {
				t.Errorf("kept %+v, want %+v", kept.New, tt.want)
			}
			if _, ok := b.Get(2); ok || b.Len() != 2 {
				t.Errorf("member 2 still present, len %d", b.Len())
			}
			if err := b.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestMergeEdges(t *testing.T) {
	b := mustNew(t, Config{})
	mustSubmit(t, b, Submission{Member: 2, Score: 30, Seq: 2})
	if _, _, err := b.Merge(2, 2, 3); !errors.Is(err, ErrSameMember) {
		t.Errorf("self merge: %v", err)
	}
	if g, k, err := b.Merge(2, 7, 3); err != nil || g != (Change{}) || k != (Change{}) {
		t.Errorf("merge of absent member: %+v %+v %v", g, k, err)
	}
	_, kept, err := b.Merge(5, 2, 3)
	if err != nil || kept.New != (Entry{5, 30, 0, 2}) || kept.NewRank != 1 {
		t.Errorf("merge into absent member: %+v %v", kept, err)
	}
	if err := b.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestBadInput: non-finite scores, overflowing sums and out-of-range
// handles are errors that leave the board unchanged.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		s    Submission
		want error
	}{
		{"NaN score", Config{}, Submission{Member: 1, Score: math.NaN()}, ErrBadScore},
		{"+Inf score", Config{}, Submission{Member: 1, Score: math.Inf(1)}, ErrBadScore},
		{"-Inf score", Config{}, Submission{Member: 1, Score: math.Inf(-1)}, ErrBadScore},
		{"NaN subscore", Config{}, Submission{Member: 1, Subscore: math.NaN()}, ErrBadSubscore},
		{"sum overflow", Config{Policy: Sum}, Submission{Member: 1, Score: math.MaxFloat64}, ErrBadScore},
		{"sum subscore overflow", Config{Policy: Sum}, Submission{Member: 1, Subscore: math.MaxFloat64}, ErrBadSubscore},
		{"handle too large", Config{}, Submission{Member: MaxMember + 1}, ErrBadMember},
		{"largest handle", Config{}, Submission{Member: math.MaxUint32}, ErrBadMember},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustNew(t, tt.cfg)
			mustSubmit(t, b, Submission{Member: 1, Score: math.MaxFloat64, Subscore: math.MaxFloat64})
			snap, _ := b.MarshalBinary()
			if _, err := b.Submit(tt.s); !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			after, _ := b.MarshalBinary()
			if string(snap) != string(after) {
				t.Error("a refused submission changed the board")
			}
		})
	}
	if _, err := New(Config{Policy: 9}); !errors.Is(err, ErrBadConfig) {
		t.Errorf("New with unknown policy: %v", err)
	}
}

func TestReadsOutOfRange(t *testing.T) {
	b := mustNew(t, Config{})
	for m := uint32(1); m <= 3; m++ {
		mustSubmit(t, b, Submission{Member: m, Score: float64(m), Seq: uint64(m)})
	}
	for _, r := range []int{-1, 0, 4} {
		if _, ok := b.At(r); ok {
			t.Errorf("At(%d) answered", r)
		}
	}
	if rows := b.Range(3, 5, nil); len(rows) != 0 {
		t.Errorf("Range past the end: %v", rows)
	}
	if rows := b.Range(-1, 5, nil); len(rows) != 0 {
		t.Errorf("Range at negative offset: %v", rows)
	}
	if _, ok := b.Get(99); ok {
		t.Error("Get of an unknown member answered")
	}
	if _, ok := b.Rank(MaxMember + 5); ok {
		t.Error("Rank of an out-of-range member answered")
	}
	if rows, ok := b.Around(99, 3, nil); ok || len(rows) != 0 {
		t.Error("Around of an unknown member answered")
	}
	if rows, _ := b.Around(3, 100, nil); len(rows) != 3 {
		t.Errorf("Around clipped to the board: %v", rows)
	}
}

func TestParse(t *testing.T) {
	if o, err := ParseOrder("asc"); err != nil || o != Asc {
		t.Errorf("ParseOrder(asc) = %v, %v", o, err)
	}
	if p, err := ParsePolicy("sum"); err != nil || p != Sum || p.String() != "sum" {
		t.Errorf("ParsePolicy(sum) = %v, %v", p, err)
	}
	if tb, err := ParseTiebreak("latest"); err != nil || tb != LatestFirst || tb.String() != "latest" {
		t.Errorf("ParseTiebreak(latest) = %v, %v", tb, err)
	}
	for _, bad := range []func() error{
		func() error { _, err := ParseOrder("up"); return err },
		func() error { _, err := ParsePolicy("max"); return err },
		func() error { _, err := ParseTiebreak("random"); return err },
	} {
		if err := bad(); !errors.Is(err, ErrBadConfig) {
			t.Errorf("bad setting: %v", err)
		}
	}
}

func TestCountBefore(t *testing.T) {
	b, _ := New(Config{})
	for m := uint32(1); m <= 5; m++ {
		if _, err := b.Submit(Submission{Member: m, Score: float64(10 * m), Seq: uint64(m)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		e    Entry
		want int
	}{
		{Entry{Member: 5, Score: 50, Seq: 5}, 0},  // the first entry itself
		{Entry{Member: 3, Score: 30, Seq: 3}, 2},  // a middle entry
		{Entry{Member: 9, Score: 30, Seq: 2}, 2},  // an earlier seq at 30 orders before member 3
		{Entry{Member: 9, Score: 30, Seq: 4}, 3},  // a later seq orders after it
		{Entry{Member: 9, Score: 1}, 5},           // after every entry
		{Entry{Member: 9, Score: math.Inf(1)}, 0}, // before every entry
		{Entry{Member: 1, Score: 10, Seq: 1}, 4},  // the last entry
	} {
		if got := b.CountBefore(tc.e); got != tc.want {
			t.Errorf("CountBefore(%+v) = %d, want %d", tc.e, got, tc.want)
		}
	}
}
