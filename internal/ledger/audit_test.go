package ledger

import (
	"strings"
	"testing"
)

// An audit finds a true snapshot equal, a forged one different (naming
// the rank), one past the stream's end foreign, and one that does not
// decode broken; its digest is the rebuilt state's.
func TestAudit(t *testing.T) {
	evs := (&script{b: randomBytes(5, 1500)}).events()
	st := New()
	var mid []byte
	for i, ev := range evs {
		st.Apply(uint64(i+1), ev)
		if i == len(evs)/2 {
			mid, _ = st.Encode(nil)
		}
	}
	forged, _ := Decode(mid, nil)
	seq := forged.Seq()
	forged.Apply(seq+1, &Event{Kind: EvSettings, Board: "zz", Settings: &Settings{}})
	forged.Skip(seq)
	bad, _ := forged.Encode(nil)
	ahead := New()
	ahead.Skip(uint64(len(evs) + 5))
	future, _ := ahead.Encode(nil)

	a := NewAudit(nil)
	a.AddSnapshot("true", mid)
	a.AddSnapshot("forged", bad)
	a.AddSnapshot("future", future)
	a.AddSnapshot("broken", mid[:10])
	for i, ev := range (&script{b: randomBytes(5, 1500)}).events() {
		a.Apply(uint64(i+1), ev)
	}
	r := a.Result("t", uint64(len(evs)))
	if len(r.Snapshots) != 4 || r.Err != nil || r.OK() || r.Events != uint64(len(evs)) {
		t.Fatalf("audit %+v", r)
	}
	for i, want := range []string{"", "board zz: in the snapshot, not in the replay", "past the stream's end", "does not decode"} {
		s := r.Snapshots[i]
		if s.Equal != (want == "") || want != "" && !strings.Contains(strings.Join(s.Diffs, "\n"), want) {
			t.Errorf("%s: equal %v, diffs %q; want %q", s.Source, s.Equal, s.Diffs, want)
		}
	}
	whole, _ := st.Encode(nil)
	b := NewAudit(nil)
	b.AddSnapshot("whole", whole)
	for i, ev := range (&script{b: randomBytes(5, 1500)}).events() {
		b.Apply(uint64(i+1), ev)
	}
	if r := b.Result("t", uint64(len(evs))); !r.OK() || r.Digest == "" || r.Boards != st.NumBoards() {
		t.Fatalf("a true audit: %+v", r)
	}
}
