package board

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// model is the reference the board is checked against: a map of entries,
// sorted in full for every read. Its policy and order code is written
// plainly, in floats, independently of the board's key transforms.
type model struct {
	cfg     Config
	entries map[uint32]Entry
}

func newModel(cfg Config) *model { return &model{cfg: cfg, entries: map[uint32]Entry{}} }

// nameOrder is a member comparison unlike handle order: bytewise on the
// decimal name, so "10" < "9".
func nameOrder(a, b uint32) int {
	return strings.Compare(strconv.Itoa(int(a)), strconv.Itoa(int(b)))
}

func (m *model) better(a, b float64, o Order) bool {
	if o == Desc {
		return a > b
	}
	return a < b
}

func (m *model) less(a, b Entry) bool {
	if a.Score != b.Score {
		return m.better(a.Score, b.Score, m.cfg.Order)
	}
	if a.Subscore != b.Subscore {
		return m.better(a.Subscore, b.Subscore, m.cfg.SubscoreOrder)
	}
	if a.Seq != b.Seq {
		return (a.Seq < b.Seq) == (m.cfg.Tiebreak == Earliest)
	}
	return m.cfg.CompareMembers(a.Member, b.Member) < 0
}

func (m *model) betterPair(a, b Entry) bool {
	if a.Score != b.Score {
		return m.better(a.Score, b.Score, m.cfg.Order)
	}
	return m.better(a.Subscore, b.Subscore, m.cfg.SubscoreOrder)
}

func (m *model) rows() []Row {
	es := make([]Entry, 0, len(m.entries))
	for _, e := range m.entries {
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b Entry) int {
		if m.less(a, b) {
			return -1
		}
		return 1
	})
	rows := make([]Row, len(es))
	for i, e := range es {
		rows[i] = Row{Rank: i + 1, Entry: e}
	}
	return rows
}

func (m *model) submit(s Entry) {
	old, ok := m.entries[s.Member]
	switch {
	case !ok:
		m.entries[s.Member] = s
	case m.cfg.Policy == Best && m.betterPair(s, old):
		m.entries[s.Member] = s
	case m.cfg.Policy == Latest && (s.Score != old.Score || s.Subscore != old.Subscore):
		m.entries[s.Member] = s
	case m.cfg.Policy == Sum && (s.Score != 0 || s.Subscore != 0):
		m.entries[s.Member] = Entry{s.Member, old.Score + s.Score, old.Subscore + s.Subscore, s.Seq}
	}
}

func (m *model) merge(into, from uint32, seq uint64) {
	f, ok := m.entries[from]
	if !ok || into == from {
		return
	}
	delete(m.entries, from)
	f.Member = into
	i, ok := m.entries[into]
	if !ok {
		m.entries[into] = f
		return
	}
	take := false
	switch m.cfg.Policy {
	case Best:
		take = m.betterPair(f, i) || (!m.betterPair(i, f) && m.less(Entry{Seq: f.Seq}, Entry{Seq: i.Seq}))
	case Latest:
		take = f.Seq > i.Seq
	case First:
		take = f.Seq < i.Seq
	case Sum:
		if f.Score != 0 || f.Subscore != 0 {
			m.entries[into] = Entry{into, i.Score + f.Score, i.Subscore + f.Subscore, seq}
		}
	}
	if take {
		m.entries[into] = f
	}
}

// harness drives a board and its model with the same operations and
// compares every read after every step.
type harness struct {
	t     testing.TB
	b     *Board
	m     *model
	seq   uint64
	steps int
}

func newHarness(t testing.TB, cfg Config) *harness {
	cfg.CompareMembers = nameOrder
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Small leaves make 40 members split, merge and empty leaves all the
	// time; one configuration in five keeps the real size.
	b.limit = testLimit(cfg)
	return &harness{t: t, b: b, m: newModel(cfg)}
}

func (h *harness) fail(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf("step %d (%+v): %s", h.steps, h.m.cfg.Policy, fmt.Sprintf(format, args...))
}

func (h *harness) submit(member uint32, score, sub float64, sameSeq bool) {
	if !sameSeq {
		h.seq++
	}
	s := Submission{Member: member, Score: score, Subscore: sub, Seq: h.seq}
	before, hadOld := h.m.entries[member]
	c, err := h.b.Submit(s)
	if err != nil {
		h.fail("submit %+v: %v", s, err)
	}
	h.m.submit(Entry(s))
	after := h.m.entries[member]
	if c.New != after {
		h.fail("submit %+v: change.New %+v, model %+v", s, c.New, after)
	}
	if hadOld && c.Old != before {
		h.fail("submit %+v: change.Old %+v, model %+v", s, c.Old, before)
	}
	h.verify(c)
}

func (h *harness) remove(member uint32) {
	_, had := h.m.entries[member]
	c, ok := h.b.Remove(member)
	if ok != had {
		h.fail("remove %d: %v, model has it %v", member, ok, had)
	}
	delete(h.m.entries, member)
	h.verify(c)
}

func (h *harness) merge(into, from uint32) {
	h.seq++
	_, _, err := h.b.Merge(into, from, h.seq)
	if (err != nil) != (into == from) {
		h.fail("merge %d into %d: %v", from, into, err)
	}
	h.m.merge(into, from, h.seq)
	h.verify(Change{})
}

// verify compares every read with the model and checks the invariants.
func (h *harness) verify(c Change) {
	h.t.Helper()
	h.steps++
	if err := h.b.Check(); err != nil {
		h.fail("Check: %v", err)
	}
	want := h.m.rows()
	if h.b.Len() != len(want) {
		h.fail("Len %d, model %d", h.b.Len(), len(want))
	}
	if c.NewRank > 0 && want[c.NewRank-1].Member != c.Member {
		h.fail("change %+v: rank %d holds %d", c, c.NewRank, want[c.NewRank-1].Member)
	}
	h.verifyRows(want)
	h.verifyMembers(want)
	h.verifyScoreSpans(want)
}

// verifyScoreSpans checks ScoreSpan over ranges whose ends fall on, between
// and beyond the step's scores (-3..3), against a scan of the model's rows.
func (h *harness) verifyScoreSpans(want []Row) {
	ends := []float64{math.Inf(-1), -3.5, -3, -1, -0.5, 0, 1, 1 + 1e-9, 2.5, 3, math.Inf(1)}
	for i, lo := range ends {
		for _, hi := range ends[i:] {
			from, to := -1, -1
			for j, r := range want {
				if r.Score >= lo && r.Score <= hi {
					if from < 0 {
						from = j
					}
					to = j + 1
				}
			}
			gotFrom, gotTo := h.b.ScoreSpan(lo, hi)
			if from < 0 {
				if gotTo != gotFrom {
					h.fail("ScoreSpan(%v, %v) = %d, %d: want an empty span", lo, hi, gotFrom, gotTo)
				}
				continue
			}
			if gotFrom != from || gotTo != to {
				h.fail("ScoreSpan(%v, %v) = %d, %d, want %d, %d", lo, hi, gotFrom, gotTo, from, to)
			}
		}
	}
}

func (h *harness) verifyRows(want []Row) {
	got := h.b.Range(0, len(want)+1, nil)
	if !slices.Equal(got, want) {
		h.fail("Range(0, all):\n got %v\nwant %v", got, want)
	}
	for _, w := range want {
		if r, ok := h.b.At(w.Rank); !ok || r != w {
			h.fail("At(%d) = %v %v, want %v", w.Rank, r, ok, w)
		}
	}
	if _, ok := h.b.At(len(want) + 1); ok {
		h.fail("At past the end answered")
	}
	off := len(want) / 3
	if got := h.b.Range(off, 3, nil); !slices.Equal(got, want[off:min(off+3, len(want))]) {
		h.fail("Range(%d, 3) = %v", off, got)
	}
	var asc []Row
	h.b.Ascend(off+1, func(r Row) bool { asc = append(asc, r); return len(asc) < 4 })
	if !slices.Equal(asc, want[off:min(off+4, len(want))]) {
		h.fail("Ascend(%d) = %v", off+1, asc)
	}
}

func (h *harness) verifyMembers(want []Row) {
	for _, w := range want {
		if r, ok := h.b.Get(w.Member); !ok || r != w {
			h.fail("Get(%d) = %v %v, want %v", w.Member, r, ok, w)
		}
		around, _ := h.b.Around(w.Member, 2, nil)
		lo, hi := max(0, w.Rank-3), min(len(want), w.Rank+2)
		if !slices.Equal(around, want[lo:hi]) {
			h.fail("Around(%d, 2) = %v, want %v", w.Member, around, want[lo:hi])
		}
		better := 0
		for _, o := range want {
			if h.m.betterPair(o.Entry, w.Entry) {
				better++
			}
		}
		if got := h.b.CountBetter(w.Score, w.Subscore); got != better {
			h.fail("CountBetter(%v, %v) = %d, want %d", w.Score, w.Subscore, got, better)
		}
		// A cursor at an entry that is on the board has passed the rows above it.
		if got := h.b.CountBefore(w.Entry); got != w.Rank-1 {
			h.fail("CountBefore(%v) = %d, want %d", w.Entry, got, w.Rank-1)
		}
	}
}

// testLimit picks a leaf size for a configuration.
func testLimit(cfg Config) int {
	limits := []int{2, 3, 4, 5, leafCap}
	return limits[(int(cfg.Policy)*4+int(cfg.Order)*2+int(cfg.Tiebreak))%len(limits)]
}

// configs lists every combination of policy, orders and tiebreak.
func configs() []Config {
	var cs []Config
	for p := Best; p <= First; p++ {
		for o := Desc; o <= Asc; o++ {
			for t := Earliest; t <= LatestFirst; t++ {
				cs = append(cs, Config{Policy: p, Order: o, SubscoreOrder: 1 - o, Tiebreak: t})
			}
		}
	}
	return cs
}

func seed(t *testing.T) uint64 {
	if s := os.Getenv("RANKWIRE_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RANKWIRE_SEED: %v", err)
		}
		return v
	}
	return rand.Uint64()
}

// TestModel runs seeded random operations on every configuration, checking
// every read after every step. Rerun a failure with RANKWIRE_SEED=<seed>.
func TestModel(t *testing.T) {
	s := seed(t)
	t.Logf("seed %d (set RANKWIRE_SEED to rerun)", s)
	steps := 600
	if testing.Short() {
		steps = 150
	}
	for i, cfg := range configs() {
		t.Run(fmt.Sprintf("%v/%v/%v", cfg.Policy, cfg.Order, cfg.Tiebreak), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(s, uint64(i)))
			cfg.Seed = rng.Uint64()
			h := newHarness(t, cfg)
			for range steps {
				h.step(rng.Uint32())
			}
		})
	}
}

// step performs one operation chosen by r: scores come from a small set so
// that ties on score, subscore and sequence are common, and some differ by
// less than a fence resolves (the top 32 bits of the key), so that searches
// must fall back to comparing records.
func (h *harness) step(r uint32) {
	member := r%40 + 1
	score := float64(int(r>>6%7)-3) + float64(r>>20%3)*1e-9
	sub := float64(r >> 9 % 3)
	switch op := r >> 12 % 16; {
	case op < 11:
		h.submit(member, score, sub, op == 0)
	case op < 14:
		h.remove(member)
	default:
		h.merge(member, r>>16%40+1)
	}
}
