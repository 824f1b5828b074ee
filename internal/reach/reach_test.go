package reach

import (
	"errors"
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)

const silence = 1250 * time.Millisecond

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func TestReachCountsPeersHeardWithinSilence(t *testing.T) {
	tb := New("n1", 3, silence)
	if h, of := tb.Reach(at(0)); h != 1 || of != 3 || !CutOff(h, of) {
		t.Fatalf("nothing heard: reach %d of %d, want 1 of 3, cut off", h, of)
	}
	tb.Heard(Beat{Node: "n1"}, at(0)) // its own beat comes back: not a peer
	tb.Heard(Beat{Node: "n2", Hears: []string{"n1", "n3"}}, at(0))
	if h, of := tb.Reach(at(int(silence.Milliseconds()))); h != 2 || of != 3 || CutOff(h, of) {
		t.Fatalf("n2 heard at the bound: reach %d of %d, want 2 of 3, not cut off", h, of)
	}
	if h, _ := tb.Reach(at(int(silence.Milliseconds()) + 1)); h != 1 {
		t.Fatalf("n2 silent past the bound: reach %d, want 1", h)
	}
	tb.Heard(Beat{Node: "n3"}, at(2000))
	tb.Heard(Beat{Node: "n2"}, at(2000))
	if got := tb.Hears(at(2100)); !slices.Equal(got, []string{"n2", "n3"}) {
		t.Fatalf("Hears = %v, want [n2 n3]", got)
	}
}

func TestOfGrowsWithPeersBeyondTheConfiguredMembers(t *testing.T) {
	tb := New("n1", 1, silence) // --routes named only itself
	for _, p := range []string{"n2", "n3", "n4"} {
		tb.Heard(Beat{Node: p}, at(0))
	}
	if h, of := tb.Reach(at(100)); h != 4 || of != 4 {
		t.Fatalf("reach %d of %d, want 4 of 4", h, of)
	}
	if h, of := tb.Reach(at(5000)); !CutOff(h, of) {
		t.Fatalf("every peer silent: reach %d of %d, want cut off", h, of)
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

func TestBridgeNamesThePeerThatHearsEveryone(t *testing.T) {
	// n1 leads; n1 and n3 are cut from each other; n2 hears both.
	l := New("n1", 3, silence)
	l.Heard(Beat{Node: "n2", Hears: []string{"n1", "n3"}}, at(0))
	l.Heard(Beat{Node: "n3", Hears: []string{"n1", "n2"}}, at(0))
	if got := l.Bridge(at(100)); got != "" {
		t.Fatalf("every peer heard: Bridge = %q, want none", got)
	}
	l.Heard(Beat{Node: "n2", Hears: []string{"n1", "n3"}}, at(2000))
	if got := l.Bridge(at(2000)); got != "n2" {
		t.Fatalf("n3 silent, n2 hears it: Bridge = %q, want n2", got)
	}
	// n2 too lost n3: n3 is down, not behind a bridge; nobody sees more.
	l.Heard(Beat{Node: "n2", Hears: []string{"n1"}}, at(2200))
	if got := l.Bridge(at(2200)); got != "" {
		t.Fatalf("n3 down for both: Bridge = %q, want none", got)
	}
	// n2 hears n3 but not n1: no use to n1.
	l.Heard(Beat{Node: "n2", Hears: []string{"n3"}}, at(2400))
	if got := l.Bridge(at(2400)); got != "" {
		t.Fatalf("n2 does not hear n1: Bridge = %q, want none", got)
	}
	// Cut off from everyone: the majority elects without this node.
	if got := l.Bridge(at(9000)); got != "" {
		t.Fatalf("cut off: Bridge = %q, want none", got)
	}
}

func TestBeatRoundTrip(t *testing.T) {
	b := Beat{Node: "n1", Hears: []string{"n2"}}
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
