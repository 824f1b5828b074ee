package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// refSub is a submission as the reference model keeps it.
type refSub struct {
	score, sub float64
	seq        uint64
}

// refFold is the reference: the entry a policy makes of the surviving
// submissions, written out plainly (desc orders, earliest ties), and
// whether any survived.
func refFold(policy string, subs []refSub) (refSub, bool) {
	var cur refSub
	for i, s := range subs {
		if i == 0 {
			cur = s
			continue
		}
		same := s.score == cur.score && s.sub == cur.sub
		switch policy {
		case "best":
			if s.score > cur.score || s.score == cur.score && s.sub > cur.sub {
				cur = s
			}
		case "latest":
			if !same {
				cur = s
			}
		case "sum":
			next := refSub{cur.score + s.score, cur.sub + s.sub, s.seq}
			if next.score != cur.score || next.sub != cur.sub {
				cur = next
			}
		}
	}
	return cur, len(subs) > 0
}

// voidModel drives a live state, its log and the reference side by side.
type voidModel struct {
	t      testing.TB
	policy string
	st     *State
	log    []*Event
	// subs[window][member] are the surviving submissions, in order;
	// window "all" or the day's start.
	subs    map[string]map[string][]refSub
	applied map[uint64]voidRef // by the seq their result carried (window all)
	// continuedSame counts the continued plans equal to fresh ones.
	continuedSame int
}

// voidRef locates an applied submission in the reference.
type voidRef struct {
	member string
	day    string
	seq    uint64 // the stream seq (its entry seq where it counted)
}

const voidBase = int64(1_800_000_000_000)

func newVoidModel(t testing.TB, policy string) *voidModel {
	m := &voidModel{t: t, policy: policy, st: New(), subs: map[string]map[string][]refSub{}, applied: map[uint64]voidRef{}}
	set := Settings{Policy: policy, Windows: []string{"all", "day"}}
	m.commit(&Event{Kind: EvSettings, At: voidBase, Board: "v", Settings: &set})
	return m
}

// commit appends ev to the log and applies it to the live state.
func (m *voidModel) commit(ev *Event) Outcome {
	m.log = append(m.log, ev)
	return m.st.Apply(uint64(len(m.log)), ev)
}

func (m *voidModel) submit(member string, score, sub float64, hour int64) {
	at := voidBase + hour*3_600_000
	out := m.commit(&Event{Kind: EvSubmit, At: at, Board: "v", Items: []Item{{Member: member, Score: score, Subscore: sub}}})
	if out.Err != nil {
		m.t.Fatal(out.Err)
	}
	seq, day := uint64(len(m.log)), fmt.Sprint(utcCalendar.keyAt(kindDay, at).start)
	for _, w := range []string{"all", day} {
		if m.subs[w] == nil {
			m.subs[w] = map[string][]refSub{}
		}
		m.subs[w][member] = append(m.subs[w][member], refSub{score, sub, seq})
	}
	if r := out.Results[0]; r.Applied {
		m.applied[r.Seq] = voidRef{member, day, seq}
	}
}

// plan replays the log into a planner of the void of result seq rseq.
func (m *voidModel) plan(rseq uint64) (*Void, error) {
	p := NewVoidPlanner("v", rseq)
	for p.Next() {
		for i, ev := range m.log {
			p.Apply(uint64(i+1), ev)
		}
	}
	return p.Plan()
}

// continued checks that a plan of rseq made on the log's first k events
// and continued over the rest (the hub's answer to a stale plan) answers
// as the fresh plan v, err does, for each k tried (one, two or four events
// left out, as a stale plan's are, and half the log) where the short plan
// succeeds; or with ErrVoidStale (the hub then plans afresh). It returns
// how many continued plans equalled the fresh one.
func (m *voidModel) continued(rseq uint64, v *Void, err error) (same int) {
	n := len(m.log)
	for _, k := range []int{n - 1, n - 2, n - 4, n / 2} {
		if k < 1 || k >= n {
			continue
		}
		p := NewVoidPlanner("v", rseq)
		for p.Next() {
			for i, ev := range m.log[:k] {
				p.Apply(uint64(i+1), ev)
			}
		}
		if _, err := p.Plan(); err != nil {
			continue // no plan to continue: the hub would not
		}
		for i, ev := range m.log[k:] {
			p.Apply(uint64(k+i+1), ev)
		}
		v2, err2 := p.Plan()
		switch {
		case errors.Is(err2, ErrVoidStale):
		case fmt.Sprint(err2) != fmt.Sprint(err) || !reflect.DeepEqual(v2, v):
			m.t.Fatalf("void of %d planned on %d events and continued to %d: %+v, %v; a fresh plan: %+v, %v", rseq, k, len(m.log), v2, err2, v, err)
		default:
			same++
		}
	}
	return same
}

// void plans and commits the void of rseq and takes it out of the reference.
func (m *voidModel) void(rseq uint64) {
	v, err := m.plan(rseq)
	m.continuedSame += m.continued(rseq, v, err)
	if err != nil {
		m.t.Fatalf("plan %d: %v", rseq, err)
	}
	if out := m.commit(&Event{Kind: EvVoid, At: voidBase, Board: "v", Void: v, Reason: "test", Sub: "ops"}); out.Err != nil {
		m.t.Fatalf("void %d: %v", rseq, out.Err)
	}
	ref := m.applied[rseq]
	delete(m.applied, rseq)
	for _, w := range []string{"all", ref.day} {
		subs := m.subs[w][ref.member]
		for i, s := range subs {
			if s.seq == ref.seq {
				m.subs[w][ref.member] = append(subs[:i:i], subs[i+1:]...)
				break
			}
		}
	}
}

// check compares every member's entry in every window with the reference.
func (m *voidModel) check() {
	bs := m.st.boards["v"]
	for _, k := range bs.sortedWindows() {
		name := "all"
		if k.kind == kindDay {
			name = fmt.Sprint(k.start)
		}
		b := bs.windows[k].b
		for member, subs := range m.subs[name] {
			want, ok := refFold(m.policy, subs)
			h, _ := m.st.ix.Resolve(member)
			row, got := b.Get(h)
			if ok != got || ok && (row.Score != want.score || row.Subscore != want.sub || row.Seq != want.seq) {
				m.t.Fatalf("%s, window %s, member %s: entry %+v (%t), reference %+v (%t)", m.policy, name, member, row.Entry, got, want, ok)
			}
		}
		if err := b.Check(); err != nil {
			m.t.Fatal(err)
		}
	}
}

// replayEqual: a replay of the log gives the live state byte for byte.
func (m *voidModel) replayEqual() {
	again := New()
	for i, ev := range m.log {
		again.Apply(uint64(i+1), ev)
	}
	a, _ := m.st.Encode(nil)
	b, _ := again.Encode(nil)
	if !bytes.Equal(a, b) {
		m.t.Fatalf("the replay differs: %v", Diff(m.st, again))
	}
}

// run plays a script of bytes: each op submits or voids a random
// applied submission, checking the reference after each void.
func runVoidScript(t testing.TB, policy string, script []byte) (voids, continuedSame int) {
	m := newVoidModel(t, policy)
	for i := 0; i+2 < len(script); i += 3 {
		op, a, b := script[i], script[i+1], script[i+2]
		if op%4 == 0 && len(m.applied) > 0 {
			seqs := make([]uint64, 0, len(m.applied))
			for s := range m.applied {
				seqs = append(seqs, s)
			}
			min := seqs[0]
			for _, s := range seqs {
				if (s+uint64(a))%7 < (min+uint64(a))%7 || (s+uint64(a))%7 == (min+uint64(a))%7 && s < min {
					min = s
				}
			}
			m.void(min)
			voids++
			m.check()
			continue
		}
		m.submit(fmt.Sprint("m", a%4), float64(b%16)-4, float64(op%3), int64(i/3))
	}
	m.check()
	m.replayEqual()
	return voids, m.continuedSame
}

// TestVoidModel: voids of random submissions leave every member's entry,
// in the all window and each day window, equal to the reference computed
// from the surviving submissions, for every policy; the log replays to
// the same bytes.
func TestVoidModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 7))
	for _, policy := range []string{"best", "latest", "sum", "first"} {
		voids, continued := 0, 0
		for range 20 {
			script := make([]byte, 3*60)
			for i := range script {
				script[i] = byte(rng.IntN(256))
			}
			v, c := runVoidScript(t, policy, script)
			voids, continued = voids+v, continued+c
		}
		t.Logf("%s: %d voids, %d continued plans equal to fresh ones", policy, voids, continued)
		if voids < 100 || continued < 300 {
			t.Fatalf("%s: %d voids checked, %d continued plans equal to fresh ones; want 100 and 300 or more", policy, voids, continued)
		}
	}
}

// FuzzVoid runs the model from arbitrary scripts.
func FuzzVoid(f *testing.F) {
	f.Add(byte(0), []byte{1, 2, 3, 5, 2, 9, 0, 0, 0, 4, 1, 1, 8, 3, 3})
	f.Fuzz(func(t *testing.T, p byte, script []byte) {
		if len(script) > 600 {
			script = script[:600]
		}
		runVoidScript(t, []string{"best", "latest", "sum", "first"}[p%4], script)
	})
}

// TestVoidRefusals: unknown seqs, another board's seq, a second void, a
// stale plan and a settled board are refused, each naming what.
func TestVoidRefusals(t *testing.T) {
	m := newVoidModel(t, "best")
	m.submit("a", 10, 0, 0) // all window seq 1
	m.submit("b", 8, 0, 0)  // seq 2
	m.submit("a", 12, 0, 1) // seq 3
	m.commit(&Event{Kind: EvSettings, At: voidBase, Board: "w", Settings: &Settings{}})
	if _, err := NewVoidPlanner("v", 1).Plan(); !errors.Is(err, ErrInternal) {
		t.Fatalf("a plan without its replays: %v", err)
	}
	if _, err := m.plan(99); !errors.Is(err, ErrNotFound) || !strings.Contains(msgOf(err), "seq: 99") {
		t.Fatalf("unknown seq: %v", err)
	}
	if p := NewVoidPlanner("w", 3); true {
		for p.Next() {
			for i, ev := range m.log {
				p.Apply(uint64(i+1), ev)
			}
		}
		if _, err := p.Plan(); !errors.Is(err, ErrNotFound) || !strings.Contains(msgOf(err), "seq: 3") {
			t.Fatalf("another board's seq: %v", err)
		}
	}
	stale, err := m.plan(3)
	if err != nil {
		t.Fatal(err)
	}
	if stale.Member != "a" || len(stale.Entries) != 2 || stale.Entries[0].Now.Score != 10 {
		t.Fatalf("plan: %+v", stale)
	}
	m.submit("a", 20, 0, 1)
	out := m.commit(&Event{Kind: EvVoid, At: voidBase, Board: "v", Void: stale, Reason: "x"})
	if !errors.Is(out.Err, ErrVoidStale) || !errors.Is(out.Err, ErrConflict) || !strings.Contains(msgOf(out.Err), "seq:") {
		t.Fatalf("stale plan: %v", out.Err)
	}
	m.void(3)
	if _, err := m.plan(3); !errors.Is(err, ErrConflict) || !strings.Contains(msgOf(err), "already voided") {
		t.Fatalf("second void: %v", err)
	}
	again := m.commit(&Event{Kind: EvVoid, At: voidBase, Board: "v", Void: stale, Reason: "x"})
	if !errors.Is(again.Err, ErrConflict) || !strings.Contains(msgOf(again.Err), "already voided") {
		t.Fatalf("second void event: %v", again.Err)
	}
	m.check()
	acts, _, _ := m.st.AdminActions("v", 0, 10)
	if len(acts) != 1 || acts[0].Action != ActionVoid || acts[0].Voided != 3 || acts[0].Member != "a" || acts[0].Revision != 1 {
		t.Fatalf("admin actions: %+v", acts)
	}
}

// TestVoidAfterEndAndSettle: a void amends final standings (prizes move,
// standings.amended is due) until the board is settled; then it is
// refused naming settled. Snapshots carry the voided set.
func TestVoidAfterEndAndSettle(t *testing.T) {
	end := int64(1_800_000_000_000)
	st, seq := disputeBoard(t, end)
	log := disputeEvents(end)
	plan := func(rseq uint64) *Void {
		p := NewVoidPlanner("t", rseq)
		for p.Next() {
			for i, ev := range log {
				p.Apply(uint64(i+1), ev)
			}
		}
		v, err := p.Plan()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := plan(1) // a's 500: a has no other submission
	ev := &Event{Kind: EvVoid, At: end + 1000, Board: "t", Void: v, Reason: "exploit", Sub: "ops"}
	out := st.Apply(seq, ev)
	log = append(log, ev)
	if out.Err != nil || len(out.Notes) != 1 || out.Notes[0].Reason != "void: exploit" || out.Notes[0].Member != "a" {
		t.Fatalf("void: %v %+v", out.Err, out.Notes)
	}
	if got, want := prizes(t, st, end+1000), "b:1:€100 c:2:€50 d:3:€25"; got != want {
		t.Fatalf("after the void: %s, want %s", got, want)
	}
	back, data := reencoded(t, st)
	if again, _ := back.Encode(nil); !bytes.Equal(again, data) || len(back.boards["t"].disputes.voided) != 1 {
		t.Fatal("the voided set does not survive a snapshot")
	}
	settle := &Event{Kind: EvSettle, At: end + FinalAfter.Milliseconds(), Board: "t", Reason: "paid"}
	if out := st.Apply(seq+1, settle); out.Err != nil {
		t.Fatal(out.Err)
	}
	log = append(log, settle)
	v2 := plan(2)
	if out := st.Apply(seq+2, &Event{Kind: EvVoid, At: end + FinalAfter.Milliseconds(), Board: "t", Void: v2, Reason: "late"}); !errors.Is(out.Err, ErrConflict) || !strings.HasPrefix(msgOf(out.Err), "settled:") {
		t.Fatalf("void after settle: %v", out.Err)
	}
}

// BenchmarkVoidPlan: planning a void of a board of 100,000 members with
// 1,000,000 submissions in 1,000-item events (both replays).
func BenchmarkVoidPlan(b *testing.B) {
	evs := voidPlanLog()
	b.ResetTimer()
	for b.Loop() {
		p := NewVoidPlanner("s", 50_000)
		for p.Next() {
			for i, ev := range evs {
				p.Apply(uint64(i+1), ev)
			}
		}
		if _, err := p.Plan(); err != nil {
			b.Fatal(err)
		}
	}
}

// voidPlanLog is the log of the void benchmarks: board s's settings, then
// 1,000,000 submissions of 100,000 members in 1,000-item events.
func voidPlanLog() []*Event {
	set, _ := Settings{}.normalize()
	evs := []*Event{{Kind: EvSettings, Board: "s", Settings: &set}}
	for i := range 1000 {
		items := make([]Item, MaxBatch)
		for j := range items {
			items[j] = Item{Member: fmt.Sprint("m", (i*MaxBatch+j)%100_000), Score: float64((i*MaxBatch + j) * 7919 % 1_000_003)}
		}
		evs = append(evs, &Event{Kind: EvSubmit, Board: "s", Items: items})
	}
	return evs
}

// BenchmarkVoidPlanContinued is a stale plan's second try on the log of
// BenchmarkVoidPlan: the member submitted once more since the plan, and
// the planner continues over that event instead of replaying the log
// twice again.
func BenchmarkVoidPlanContinued(b *testing.B) {
	evs := voidPlanLog()
	p := NewVoidPlanner("s", 50_000)
	for p.Next() {
		for i, ev := range evs {
			p.Apply(uint64(i+1), ev)
		}
	}
	v, err := p.Plan()
	if err != nil {
		b.Fatal(err)
	}
	seq := uint64(len(evs))
	b.ResetTimer()
	for b.Loop() {
		seq++
		p.Apply(seq, &Event{Kind: EvSubmit, Board: "s", Items: []Item{{Member: v.Member, Score: float64(seq)}}})
		if _, err := p.Plan(); err != nil {
			b.Fatal(err)
		}
	}
}
