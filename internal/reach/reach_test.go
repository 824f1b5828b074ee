package reach

import (
	"errors"
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)

const (
	silence = 1250 * time.Millisecond
	every   = 250 * time.Millisecond
)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func TestReachCountsPeersHeardWithinSilence(t *testing.T) {
	tb := New("n1", 3, silence, every)
	if h, of := reachOf(tb, at(0)); h != 1 || of != 3 || !CutOff(h, of) {
		t.Fatalf("nothing heard: reach %d of %d, want 1 of 3, cut off", h, of)
	}
	tb.Heard(Beat{Node: "n1"}, at(0)) // its own beat comes back: not a peer
	tb.Heard(Beat{Node: "n2", Hears: hears("n1", 0, "n3", 0)}, at(0))
	if h, of := reachOf(tb, at(int(silence.Milliseconds()))); h != 2 || of != 3 || CutOff(h, of) {
		t.Fatalf("n2 heard at the bound: reach %d of %d, want 2 of 3, not cut off", h, of)
	}
	if h, _ := reachOf(tb, at(int(silence.Milliseconds())+1)); h != 1 {
		t.Fatalf("n2 silent past the bound: reach %d, want 1", h)
	}
	tb.Heard(Beat{Node: "n3"}, at(1000))
	tb.Heard(Beat{Node: "n3"}, at(2000))
	tb.Heard(Beat{Node: "n2"}, at(1900))
	if got := tb.Hears(at(2100)); !slices.Equal(got, []string{"n2", "n3"}) {
		t.Fatalf("Hears = %v, want [n2 n3]", got)
	}
	want := []Heard{{Node: "n2", AgoMS: 200, ForMS: 200}, {Node: "n3", AgoMS: 100, ForMS: 1100}}
	if got := tb.View(at(2100)).Beat; got.Node != "n1" || !slices.Equal(got.Hears, want) {
		t.Fatalf("Beat = %+v, want n1 hearing n2 (again) 200 ms before, n3 100 ms before and for 1.1 s", got)
	}
}

func TestOfGrowsWithPeersBeyondTheConfiguredMembers(t *testing.T) {
	tb := New("n1", 1, silence, every) // --routes named only itself
	for _, p := range []string{"n2", "n3", "n4"} {
		tb.Heard(Beat{Node: p}, at(0))
	}
	if h, of := reachOf(tb, at(100)); h != 4 || of != 4 {
		t.Fatalf("reach %d of %d, want 4 of 4", h, of)
	}
	if h, of := reachOf(tb, at(5000)); !CutOff(h, of) {
		t.Fatalf("every peer silent: reach %d of %d, want cut off", h, of)
	}
	tb.Heard(Beat{Node: "n2"}, at(int(Forget.Milliseconds())))
	if h, of := reachOf(tb, at(int(Forget.Milliseconds())+1)); h != 2 || of != 2 {
		t.Fatalf("n3 and n4 gone for %v: reach %d of %d, want 2 of 2 (they no longer count)", Forget, h, of)
	}
}

// View reads and never writes: asking twice, or asking at a time past
// Forget and then at an earlier one, gives the same answers; only Prune
// drops the peers silent for longer than Forget.
func TestViewIsPureAndPruneForgets(t *testing.T) {
	tb := New("n1", 1, silence, every)
	for _, p := range []string{"n2", "n3"} {
		tb.Heard(Beat{Node: p, Hears: hears("n1", 0)}, at(0))
	}
	late := at(int(Forget.Milliseconds()) + 1)
	if h, of := reachOf(tb, late); h != 1 || of != 1 {
		t.Fatalf("every peer silent past Forget: reach %d of %d, want 1 of 1", h, of)
	}
	first, again := tb.View(at(100)), tb.View(at(100))
	if first.Heard != 3 || first.Of != 3 || !slices.Equal(first.Hears, []string{"n2", "n3"}) || len(tb.last) != 2 {
		t.Fatalf("after a View past Forget, at 100 ms: %+v with %d peers kept, want 3 of 3 hearing n2 and n3, both kept", first, len(tb.last))
	}
	if again.Heard != first.Heard || again.Of != first.Of || !slices.Equal(again.Beat.Hears, first.Beat.Hears) {
		t.Fatalf("View twice: %+v then %+v", first, again)
	}
	tb.Heard(Beat{Node: "n2"}, at(int(Forget.Milliseconds())))
	tb.Prune(late)
	if _, ok := tb.last["n3"]; ok || len(tb.last) != 1 || len(tb.first) != 1 || len(tb.hears) != 1 {
		t.Fatalf("Prune past Forget kept %d peers (%v), want n2 only", len(tb.last), tb.last)
	}
	if h, of := reachOf(tb, late); h != 2 || of != 2 {
		t.Fatalf("after Prune: reach %d of %d, want 2 of 2", h, of)
	}
}

func TestCutOffIsFewerThanAMajority(t *testing.T) {
	for _, c := range []struct {
		heard, of int
		cut       bool
	}{{1, 1, false}, {1, 2, true}, {2, 2, false}, {1, 3, true}, {2, 3, false}, {2, 4, true}, {3, 4, false}, {2, 5, true}, {3, 5, false}} {
		if got := CutOff(c.heard, c.of); got != c.cut {
			t.Errorf("CutOff(%d, %d) = %v, want %v", c.heard, c.of, got, c.cut)
		}
	}
}

// reachOf is View's count: servers heard and of how many.
func reachOf(tb *Table, now time.Time) (heard, of int) {
	v := tb.View(now)
	return v.Heard, v.Of
}

// hears builds a beat's Hears from name, ago (ms) pairs.
func hears(kv ...any) []Heard {
	var out []Heard
	for i := 0; i < len(kv); i += 2 {
		out = append(out, Heard{Node: kv[i].(string), AgoMS: int64(kv[i+1].(int))})
	}
	return out
}

// beats feeds n1's table every peer's beats every 250 ms from from to to
// (ms), as the network lets them through: sees(a, b, ms) says whether b
// got a's beat sent at ms. Each peer's beat names whom it heard, when
// last and since when without a silence, and whether they hear it back.
func beats(tb *Table, from, to int, sees func(a, b string, ms int) bool) {
	nodes := []string{"n1", "n2", "n3"}
	type streak struct{ first, last int }
	got := map[[2]string]*streak{}
	sil := int(silence.Milliseconds())
	for ms := 0; ms <= to; ms += 250 {
		for _, a := range nodes {
			for _, b := range nodes {
				if a == b || !sees(a, b, ms) {
					continue
				}
				k := [2]string{a, b}
				if st := got[k]; st == nil || ms-st.last > sil {
					got[k] = &streak{ms, ms}
				} else {
					st.last = ms
				}
			}
		}
		if ms < from {
			continue
		}
		for _, p := range nodes[1:] {
			if !sees(p, "n1", ms) {
				continue
			}
			var h []Heard
			for _, q := range nodes {
				if st := got[[2]string{q, p}]; st != nil && ms-st.last <= sil {
					back := got[[2]string{p, q}]
					h = append(h, Heard{Node: q, AgoMS: int64(ms - st.last), ForMS: int64(ms - st.first), Back: back != nil && ms-back.last <= sil})
				}
			}
			tb.Heard(Beat{Node: p, Hears: h}, at(ms))
		}
	}
}

func TestBridgeNamesThePeerThatHearsEveryone(t *testing.T) {
	// n1 leads; from 1 s on, n1 and n3 are cut from each other; n2 hears both.
	l := New("n1", 3, silence, every)
	cut := func(a, b string, ms int) bool {
		return ms < 1000 || !(a == "n1" && b == "n3" || a == "n3" && b == "n1")
	}
	beats(l, 0, 900, cut)
	if got := l.View(at(900)).Bridge; got != "" {
		t.Fatalf("every peer heard: Bridge = %q, want none", got)
	}
	l.Heard(Beat{Node: "n1"}, at(900)) // its own: ignored
	beats(l, 1000, 1750, cut)
	if got := l.View(at(1750)).Bridge; got != "" { // last heard n3 at 750: 1 s ago, within the silence
		t.Fatalf("n3 heard 1 s ago: Bridge = %q, want none yet", got)
	}
	if h, _ := reachOf(l, at(1750)); h != 3 {
		t.Fatalf("reach %d, want 3: n3 still within the silence", h)
	}
	beats(l, 2000, 2250, cut)
	if got := l.View(at(2250)).Bridge; got != "n2" {
		t.Fatalf("n3 silent for n1 only for 1.5 s, n2 hears it and it hears n2: Bridge = %q, want n2", got)
	}
}

// Load delays beats without cutting anything (docs/BENCHMARKS.md, "100,000
// WebSockets: the burst and the election"): on a starved machine one
// route's beats came up to a second late while another's flowed, and a
// bridge named after three beats handed the leaderships on five times in
// 20 s, each an election. A peer missed for less than the silence is no
// bridge, however much later another heard it.
func TestNoBridgeForABeatDelayedLessThanTheSilence(t *testing.T) {
	l := New("n1", 3, silence, every)
	// n2's beats to n1 are held from 1 s to 2.1 s, then arrive again; n3 hears n2 throughout.
	late := func(a, b string, ms int) bool { return !(a == "n2" && b == "n1" && ms >= 1000 && ms < 2100) }
	for end := 1000; end <= 2000; end += 250 {
		beats(l, 0, end, late)
		if got := l.View(at(end)).Bridge; got != "" {
			t.Fatalf("n2's beats %d ms late: Bridge = %q, want none", end-750, got)
		}
	}
}

// A starved or cut-off peer whose beats still go out hears nobody: its
// beats reach one peer and not this node, yet handing the leadership to
// that peer reaches it no better (it hears neither), and costs an
// election. Seen in the same benchmark: a node that heard nobody for 3 s,
// its beats reaching one peer only.
func TestNoBridgeAroundAPeerThatHearsNobody(t *testing.T) {
	l := New("n1", 3, silence, every)
	deaf := func(a, b string, ms int) bool {
		if ms < 1000 {
			return true
		}
		return b != "n3" && !(a == "n3" && b == "n1") // n3 hears nobody; only n2 still gets its beats
	}
	for end := 1000; end <= 4000; end += 250 {
		beats(l, 0, end, deaf)
		if got := l.View(at(end)).Bridge; got != "" {
			t.Fatalf("n3 hears nobody, %d ms in: Bridge = %q, want none", end, got)
		}
	}
}

// A heal lets beats through a few hundred milliseconds apart: a node that
// hears one healed peer before another sees no bridge, nor does a node of
// the majority that hears the healed peer after its partner does.
func TestNoBridgeDuringAHeal(t *testing.T) {
	for _, tc := range []struct {
		name string
		sees func(a, b string, ms int) bool
	}{
		{"n1 healing, n2 first", func(a, b string, ms int) bool {
			return ms < 1000 || a != "n1" && b != "n1" || ms >= 6000 && (a == "n2" || b == "n2") || ms >= 6500
		}},
		{"n3 healing, reaching n2 first", func(a, b string, ms int) bool {
			return ms < 1000 || a != "n3" && b != "n3" || ms >= 6000 && (a == "n2" || b == "n2") || ms >= 6500
		}},
	} {
		l := New("n1", 3, silence, every)
		for end := 5000; end <= 8000; end += 250 {
			beats(l, 0, end, tc.sees)
			if got := l.View(at(end)).Bridge; got != "" {
				t.Fatalf("%s, %d ms in: Bridge = %q, want none", tc.name, end, got)
			}
		}
	}
}

// A peer cut from everyone (or dead) goes silent for all at once: the
// other peers' beats still name it for a while, heard no later than this
// node heard it, which is no bridge.
func TestNoBridgeWhereAPeerIsSilentForAll(t *testing.T) {
	l := New("n1", 3, silence, every)
	gone := func(a, b string, ms int) bool { return ms < 1000 || a != "n3" && b != "n3" }
	for end := 1000; end <= 4000; end += 250 {
		beats(l, 0, end, gone)
		if got := l.View(at(end)).Bridge; got != "" {
			t.Fatalf("n3 silent for all, %d ms in: Bridge = %q, want none", end, got)
		}
	}
	// n2 hears n3 but not n1: no use to n1; cut off from both: none either.
	l.Heard(Beat{Node: "n2", Hears: hears("n3", 0)}, at(4100))
	if got := l.View(at(4100)).Bridge; got != "" {
		t.Fatalf("n2 does not hear n1: Bridge = %q, want none", got)
	}
	if got := l.View(at(9000)).Bridge; got != "" {
		t.Fatalf("cut off: Bridge = %q, want none", got)
	}
}

// A node that paused (starved, or its process stopped) reads its routes'
// backlogs one after the other: a peer's fresh beat names a third whose
// beats to this node still wait. Seen at the end of the same benchmark: the
// stream leader, back after 10 s without observations, handed its streams
// on 6 ms after it heard its first peer again. No bridge within the
// silence after a pause, nor while nothing arrives.
func TestNoBridgeRightAfterAPause(t *testing.T) {
	l := New("n1", 3, silence, every)
	beats(l, 0, 1000, func(a, b string, ms int) bool { return true })
	// n1 hears nothing from 1 s to 2 s; then n2's beats arrive, fresh,
	// naming n3, whose beats to n1 wait in their route until 2.75 s.
	n2 := func(ms int) {
		l.Heard(Beat{Node: "n2", Hears: []Heard{{Node: "n1", ForMS: int64(ms), Back: true}, {Node: "n3", ForMS: int64(ms), Back: true}}}, at(ms))
	}
	for ms := 2000; ms <= 2500; ms += 250 {
		n2(ms)
		if got := l.View(at(ms)).Bridge; got != "" { // n3 unheard for 1.5 s at 2.5 s
			t.Fatalf("%d ms after a pause of 1 s: Bridge = %q, want none", ms-2000, got)
		}
	}
	l.Heard(Beat{Node: "n3", Hears: hears("n1", 0, "n2", 0)}, at(2750))
	n2(2750)
	if got := l.View(at(2750)).Bridge; got != "" {
		t.Fatalf("every peer heard: Bridge = %q, want none", got)
	}
	// Nothing heard for two beats until now: no bridge either.
	if got := l.View(at(3300)).Bridge; got != "" {
		t.Fatalf("nothing heard for 550 ms: Bridge = %q, want none", got)
	}
}

func TestBeatRoundTrip(t *testing.T) {
	b := Beat{Node: "n1", Hears: hears("n2", 120)}
	got, err := ParseBeat(b.Marshal())
	if err != nil || got.Node != "n1" || !slices.Equal(got.Hears, b.Hears) {
		t.Fatalf("ParseBeat(Marshal(%v)) = %v, %v", b, got, err)
	}
	for _, bad := range []string{"", "{}", `{"node":""}`, "not json", `{"node":"` + string(make([]byte, maxBeat)) + `"}`} {
		if _, err := ParseBeat([]byte(bad)); !errors.Is(err, ErrBeat) {
			t.Errorf("ParseBeat(%.20q) = %v, want ErrBeat", bad, err)
		}
	}
}

// The follower cut from its leader only (a bridge seen from the other
// end): the leader is relayed within three beats of the cut, before its
// Raft timeout (1 s at the soonest) and a second before a bridge would be
// seen, and no longer once heard again or once the peer that heard it no
// longer does (it died: the others elect without this node's restraint).
func TestRelayedNamesALeaderHeardOnlyElsewhere(t *testing.T) {
	f := New("n1", 3, silence, every)
	cut := func(a, b string, ms int) bool {
		return ms < 1000 || !(a == "n1" && b == "n3" || a == "n3" && b == "n1") || ms >= 5000
	}
	beats(f, 0, 1250, cut)
	if got := f.View(at(1250)).Relayed; got != nil { // n3 last heard at 750: two beats
		t.Fatalf("n3 silent for two beats: Relayed = %v, want none yet", got)
	}
	beats(f, 1500, 1500, cut)
	if v := f.View(at(1500)); !slices.Equal(v.Relayed, []string{"n3"}) || v.Bridge != "" {
		t.Fatalf("n3 silent here for 750 ms, heard by n2 at 1.5 s: Relayed = %v, Bridge = %q, want [n3] and no bridge yet", v.Relayed, v.Bridge)
	}
	beats(f, 1750, 4750, cut)
	if got := f.View(at(4750)).Relayed; !slices.Equal(got, []string{"n3"}) {
		t.Fatalf("the cut lasting: Relayed = %v, want [n3]", got)
	}
	beats(f, 5000, 5000, cut)
	if got := f.View(at(5000)).Relayed; got != nil {
		t.Fatalf("n3 heard again: Relayed = %v, want none", got)
	}
	// Cut again at 6 s, and n3 dies at 8 s: n2's beats stop naming it
	// within the silence.
	dies := func(a, b string, ms int) bool {
		return (ms < 6000 || !(a == "n1" && b == "n3" || a == "n3" && b == "n1")) && (ms < 8000 || a != "n3" && b != "n3")
	}
	beats(f, 5250, 9500, dies)
	if got := f.View(at(9500)).Relayed; got != nil {
		t.Fatalf("n3 dead for 1.5 s: Relayed = %v, want none", got)
	}
}

// A peer that dies or is cut from everyone goes silent for all at once:
// nobody heard a beat of its that this node missed, so it is never
// relayed (this node's elections are needed); nor is a peer whose beats
// are late here by less than two beats.
func TestNoRelayWhereAPeerIsSilentForAllOrLateBriefly(t *testing.T) {
	for _, tc := range []struct {
		name string
		sees func(a, b string, ms int) bool
	}{
		{"n3 silent for all", func(a, b string, ms int) bool { return ms < 1000 || a != "n3" && b != "n3" }},
		{"n3's beats to n1 lost two in a row", func(a, b string, ms int) bool {
			return !(a == "n3" && b == "n1" && ms%1000 >= 250 && ms%1000 < 750) // n1 misses two beats in four
		}},
	} {
		f := New("n1", 3, silence, every)
		for end := 1000; end <= 4000; end += 250 {
			beats(f, 0, end, tc.sees)
			if got := f.View(at(end)).Relayed; got != nil {
				t.Fatalf("%s, %d ms in: Relayed = %v, want none", tc.name, end, got)
			}
		}
	}
}

// The issue-25 departure (docs/CLUSTERING.md, "Who counts as a cluster
// server"): three configured members and a fourth that joined; once the
// fourth is removed, or stops cleanly, one more death leaves the two
// survivors a majority of three, not a minority of four.
func TestARemovedOrLeavingPeerBeyondTheMembersNoLongerCounts(t *testing.T) {
	for name, depart := range map[string]func(*Table, time.Time){
		"removed": func(tb *Table, _ time.Time) { tb.Remove("n4") },
		"leaving": func(tb *Table, now time.Time) { tb.Heard(Beat{Node: "n4", Leaving: true}, now) },
	} {
		tb := New("n1", 3, silence, every)
		for _, p := range []string{"n2", "n3", "n4"} {
			tb.Heard(Beat{Node: p, Hears: hears("n1", 0)}, at(0))
		}
		if h, of := reachOf(tb, at(100)); h != 4 || of != 4 {
			t.Fatalf("%s: before: reach %d of %d, want 4 of 4", name, h, of)
		}
		depart(tb, at(200))
		tb.Heard(Beat{Node: "n2", Hears: hears("n1", 0)}, at(2000)) // n3 died at 0
		v := tb.View(at(2100))
		if v.Heard != 2 || v.Of != 3 || CutOff(v.Heard, v.Of) || !slices.Equal(v.Hears, []string{"n2"}) {
			t.Fatalf("%s: n4 gone, n3 dead: %+v, want 2 of 3 hearing n2, not cut off", name, v)
		}
		tb.Heard(Beat{Node: "n4"}, at(3000)) // it joined again
		if h, of := reachOf(tb, at(3100)); h != 3 || of != 4 {
			t.Fatalf("%s: n4 back: reach %d of %d, want 3 of 4", name, h, of)
		}
	}
}

// A configured member that stops cleanly (a rolling restart) is still
// one of the cluster's servers: the members floor keeps counting it, so
// that a partition during its restart still cuts the minority off.
func TestALeavingConfiguredMemberStillCounts(t *testing.T) {
	tb := New("n1", 3, silence, every)
	for _, p := range []string{"n2", "n3"} {
		tb.Heard(Beat{Node: p, Hears: hears("n1", 0)}, at(0))
	}
	tb.Heard(Beat{Node: "n3", Leaving: true}, at(100))
	tb.Heard(Beat{Node: "n2", Hears: hears("n1", 0)}, at(1000))
	if h, of := reachOf(tb, at(1100)); h != 2 || of != 3 || CutOff(h, of) {
		t.Fatalf("n3 restarting: reach %d of %d, want 2 of 3, not cut off", h, of)
	}
	if h, of := reachOf(tb, at(3000)); h != 1 || of != 3 || !CutOff(h, of) {
		t.Fatalf("n3 restarting, n2 cut: reach %d of %d, want 1 of 3, cut off", h, of)
	}
}

// An older node's beats carry no Leaving: its clean stop is a silence as
// before, counted until Forget.
func TestAnOlderBeatWithoutLeavingCountsUntilForget(t *testing.T) {
	tb := New("n1", 3, silence, every)
	for _, p := range []string{"n2", "n3", "n4"} {
		b, err := ParseBeat([]byte(`{"node":"` + p + `","hears":[{"node":"n1","ago_ms":0,"for_ms":0}]}`))
		if err != nil || b.Leaving {
			t.Fatalf("an older beat: %+v, %v", b, err)
		}
		tb.Heard(b, at(0))
	}
	tb.Heard(Beat{Node: "n2"}, at(2000))
	if h, of := reachOf(tb, at(2100)); h != 2 || of != 4 || !CutOff(h, of) {
		t.Fatalf("n3 and n4 silent, not leaving: reach %d of %d, want 2 of 4, cut off", h, of)
	}
	got, err := ParseBeat(Beat{Node: "n4", Leaving: true}.Marshal())
	if err != nil || !got.Leaving {
		t.Fatalf("a leaving beat's round trip: %+v, %v", got, err)
	}
}
