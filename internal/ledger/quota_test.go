package ledger

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// wantLimit fails t unless err is ErrLimit whose message starts with field.
func wantLimit(t *testing.T, err error, field string) {
	t.Helper()
	var he *Error
	if !errors.As(err, &he) || !errors.Is(err, ErrLimit) || !strings.HasPrefix(he.Msg, field+":") {
		t.Fatalf("%v, want ErrLimit naming %s", err, field)
	}
}

// The profile limit counts members with a profile; replacing one passes.
func TestProfileLimit(t *testing.T) {
	st := New()
	p := &Profile{Name: "n"}
	for i := range 3 {
		if out := st.Apply(uint64(i+1), &Event{Kind: EvProfile, Member: "m" + strconv.Itoa(i), Profile: p, MaxProfiles: 3}); out.Err != nil {
			t.Fatal(out.Err)
		}
	}
	out := st.Apply(4, &Event{Kind: EvProfile, Member: "m3", Profile: p, MaxProfiles: 3})
	wantLimit(t, out.Err, "profiles")
	if _, ok := st.Profile("m3"); ok || st.Profiles() != 3 {
		t.Fatalf("a refused profile is kept: %d profiles", st.Profiles())
	}
	if out := st.Apply(5, &Event{Kind: EvProfile, Member: "m0", Profile: &Profile{Name: "x"}, MaxProfiles: 3}); out.Err != nil {
		t.Fatalf("replacing a profile at the limit: %v", out.Err)
	}
	if out := st.Apply(6, &Event{Kind: EvProfile, Member: "m3", Profile: p}); out.Err != nil {
		t.Fatalf("an old event (no limit): %v", out.Err)
	}
}

// The alias limit counts what a link adds, merges included, and a refused
// link changes nothing.
func TestAliasLimit(t *testing.T) {
	st := New()
	link := func(seq uint64, member string, aliases ...string) error {
		return st.Apply(seq, &Event{Kind: EvLink, Member: member, Aliases: aliases, MaxAliases: 3}).Err
	}
	if err := link(1, "a", "a1", "a2", "a1", "a"); err != nil {
		t.Fatal(err)
	}
	if err := link(2, "b", "b1"); err != nil {
		t.Fatal(err)
	}
	wantLimit(t, link(3, "a", "b1"), "aliases") // merges b: a1 a2 + b b1
	wantLimit(t, link(4, "a", "x", "y"), "aliases")
	if err := link(5, "a1", "x", "a2"); err != nil { // member by alias; a2 already a's
		t.Fatal(err)
	}
	h, _ := st.ix.Resolve("a")
	if got := st.ix.Aliases(h); len(got) != 3 {
		t.Fatalf("aliases %v, want 3", got)
	}
	if _, ok := st.ix.Resolve("y"); ok {
		t.Fatal("a refused link left an alias")
	}
}

// A board's quarantine refuses items past the event's limit with reason
// quarantine_full; another board has its own room.
func TestHeldLimit(t *testing.T) {
	st := New()
	set := &Settings{Rules: &Rules{MaxScore: f64(0)}}
	st.Apply(1, &Event{Kind: EvSettings, Board: "b", Settings: set})
	st.Apply(2, &Event{Kind: EvSettings, Board: "c", Settings: set})
	items := []Item{{Member: "x", Score: 5}, {Member: "y", Score: 5}, {Member: "z", Score: 5}}
	out := st.Apply(3, &Event{Kind: EvSubmit, Board: "b", Items: items, MaxHeld: 2})
	if r := out.Results; r[0].QID == 0 || r[1].QID == 0 || r[2].Reason != ReasonFull || r[2].QID != 0 {
		t.Fatalf("results %+v, want 2 held, the third refused", r)
	}
	out = st.Apply(4, &Event{Kind: EvGroup, Groups: []Group{{Board: "b", Items: items[:1]}, {Board: "c", Items: items[:1]}}, MaxHeld: 2})
	if out.Groups[0].Results[0].Reason != ReasonFull || out.Groups[1].Results[0].QID == 0 {
		t.Fatalf("groups %+v", out.Groups)
	}
	if total, most := st.HeldNow(); total != 3 || most != 2 {
		t.Fatalf("held %d, most %d", total, most)
	}
}
