package ledger

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
	"time"
)

// finalScene: board cup ends at end; plain never ends. ada ranks on both
// with the profile "Ada" before the end.
func finalScene(t *testing.T) (*State, int64) {
	t.Helper()
	end := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	st := New()
	cup, err := Settings{EndsAt: end.Format(time.RFC3339)}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := Settings{}.normalize()
	before := end.UnixMilli() - 1000
	for _, ev := range []*Event{
		{Kind: EvSettings, Board: "cup", Settings: &cup, At: before},
		{Kind: EvSettings, Board: "plain", Settings: &plain, At: before},
		{Kind: EvSubmit, Board: "cup", Items: []Item{{Member: "ada", Score: 9}, {Member: "bob", Score: 5}}, At: before},
		{Kind: EvSubmit, Board: "plain", Items: []Item{{Member: "ada", Score: 9}}, At: before},
		{Kind: EvProfile, Member: "ada", Profile: &Profile{Name: "Ada"}, At: before},
	} {
		mustApply(t, st, ev)
	}
	return st, end.UnixMilli()
}

func mustApply(t *testing.T, st *State, ev *Event) {
	t.Helper()
	if out := st.Apply(st.Seq()+1, ev); out.Err != nil {
		t.Fatalf("%s: %v", ev.Kind, out.Err)
	}
}

func topNames(t *testing.T, st *State, board string, now int64) map[string]string {
	t.Helper()
	s, err := st.Standings(board, now, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range s.Rows {
		out[r.Member] = r.Profile.Name
	}
	return out
}

// TestFinalStandingsKeepProfileAtEnd: a rename and a merge after the end
// leave the ended board's standings (and board.ended rows) with the
// profiles at the end; an open board shows the new ones; a snapshot
// carries the record.
func TestFinalStandingsKeepProfileAtEnd(t *testing.T) {
	st, end := finalScene(t)
	after := end + 1000
	mustApply(t, st, &Event{Kind: EvProfile, Member: "ada", Profile: &Profile{Name: "pwned"}, At: after})
	mustApply(t, st, &Event{Kind: EvProfile, Member: "bob", Profile: &Profile{Name: "Bob later"}, At: after})
	mustApply(t, st, &Event{Kind: EvProfile, Member: "ada", Profile: &Profile{Name: "pwned again"}, At: after + 1})
	check := func(st *State, when string) {
		t.Helper()
		if got := topNames(t, st, "cup", after+5000); got["ada"] != "Ada" || got["bob"] != "" {
			t.Errorf("%s: cup's standings show %v, want ada Ada and bob without a name", when, got)
		}
		if got := topNames(t, st, "plain", after+5000); got["ada"] != "pwned again" {
			t.Errorf("%s: plain shows %v, want the current name", when, got)
		}
	}
	check(st, "applied")
	back, data := reencoded(t, st)
	check(back, "decoded")
	again, _ := back.Encode(nil)
	if !bytes.Equal(again, data) {
		t.Fatal("decode then encode changed the snapshot")
	}
	// A merge after the end keeps the merged member's name on cup.
	mustApply(t, st, &Event{Kind: EvLink, Member: "ada", Aliases: []string{"bob"}, At: after + 2})
	if got := topNames(t, st, "cup", after+5000); got["ada"] != "Ada" {
		t.Errorf("after a merge: cup shows %v", got)
	}
}

// TestDecodeSnapshotV4: the previous layout (RWSNAP4), without final profiles, still
// decodes to the same state.
func TestDecodeSnapshotV4(t *testing.T) {
	st, _ := finalScene(t)
	data, err := st.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	v5, err := st.encode(&snapWriter{buf: []byte(snapMagicV5), v5: true})
	if err != nil {
		t.Fatal(err)
	}
	body := v5[len(snapMagic) : len(v5)-4]
	if body[len(body)-1] != 0 {
		t.Fatal("a state with no final profiles ends in a zero count")
	}
	v4 := append([]byte(snapMagicV4), body[:len(body)-1]...)
	v4 = binary.LittleEndian.AppendUint32(v4, crc32.Checksum(v4, castagnoli))
	back, err := Decode(v4, nil)
	if err != nil {
		t.Fatalf("RWSNAP4: %v", err)
	}
	if again, _ := back.Encode(nil); !bytes.Equal(again, data) {
		t.Fatal("an RWSNAP4 snapshot decodes to another state")
	}
}
