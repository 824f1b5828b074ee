package ledger

import (
	"bytes"
	"errors"
	"testing"
)

// fakeRing is a Keyring for tests: a deterministic reversible mask (no
// plaintext byte survives it) tagged with the owner; gone members' keys
// are destroyed; fail, where set, is what Open answers.
type fakeRing struct {
	gone  map[string]bool
	seals int
	fail  error
}

var errGone = errors.New("key destroyed")

func (k *fakeRing) Seal(owner string, pt []byte) ([]byte, error) {
	if k.gone[owner] {
		return nil, errGone
	}
	k.seals++
	out := []byte("ct:" + owner + ":")
	for _, b := range pt {
		out = append(out, b^0x5a)
	}
	return out, nil
}

func (k *fakeRing) Open(owner string, ct []byte) ([]byte, bool, error) {
	if k.fail != nil {
		return nil, false, k.fail
	}
	rest, ok := bytes.CutPrefix(ct, []byte("ct:"+owner+":"))
	if k.gone[owner] || !ok {
		return nil, false, nil
	}
	pt := make([]byte, len(rest))
	for i, b := range rest {
		pt[i] = b ^ 0x5a
	}
	return pt, true, nil
}

// personalScene is finalScene with ada's two aliases and a profile
// changed after cup's end (cup records "Ada"), bob's profile, carl merged
// into bob (a former id, not personal) and dan with scores only.
func personalScene(t *testing.T) (*State, int64) {
	t.Helper()
	st, end := finalScene(t)
	after := end + 1000
	for _, ev := range []*Event{
		{Kind: EvSubmit, Board: "plain", Items: []Item{{Member: "carl", Score: 3}, {Member: "dan", Score: 2}}, At: after},
		{Kind: EvLink, Member: "ada", Aliases: []string{"phone:+35699", "email:ada@x.io"}, At: after},
		{Kind: EvProfile, Member: "ada", Profile: &Profile{Name: "Ada Lovelace", Avatar: "https://cdn.example/ada.png", Country: "GB"}, At: after},
		{Kind: EvProfile, Member: "bob", Profile: &Profile{Name: "Bob Babbage"}, At: after},
		{Kind: EvLink, Member: "bob", Aliases: []string{"carl"}, At: after},
	} {
		mustApply(t, st, ev)
	}
	return st, after
}

var adaSecrets = []string{"Ada", "cdn.example", "ada@x.io", "+35699"}

// TestSnapshotSealsPersonalData: a snapshot holds no profile, final
// profile or linked alias in clear, seals once per member with personal
// data (not dan), is the same bytes when taken again, and reads back into
// the state it was taken of; without keys it does not read (ErrKeys, not
// ErrCorrupt), nor where the keys cannot be read now.
func TestSnapshotSealsPersonalData(t *testing.T) {
	st, _ := personalScene(t)
	kr := &fakeRing{}
	data, err := st.Encode(kr)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(adaSecrets, "Bob Babbage") {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("the snapshot holds %q in clear", s)
		}
	}
	if kr.seals != 2 {
		t.Errorf("%d seals, want 2 (ada and bob)", kr.seals)
	}
	if !bytes.Contains(data, []byte("carl")) || !bytes.Contains(data, []byte("dan")) {
		t.Error("member ids are missing: they stay in clear")
	}
	if again, _ := st.Encode(&fakeRing{}); !bytes.Equal(again, data) {
		t.Error("two encodings of one state differ")
	}
	back, err := Decode(data, kr)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := st.Encode(nil)
	if got, _ := back.Encode(nil); !bytes.Equal(got, want) {
		t.Fatal("the sealed snapshot reads back as another state")
	}
	if p, _ := back.Profile("email:ada@x.io"); p.Name != "Ada Lovelace" {
		t.Errorf("ada's profile by its alias: %+v", p)
	}
	if _, err := Decode(data, nil); !errors.Is(err, ErrKeys) || errors.Is(err, ErrCorrupt) {
		t.Errorf("without keys: %v", err)
	}
	if _, err := Decode(data, &fakeRing{fail: errors.New("no leader")}); !errors.Is(err, ErrKeys) {
		t.Errorf("keys not readable now: %v", err)
	}
	// A sealed record altered: the index does not take it.
	bad := bytes.Replace(data, []byte("ct:ada:"), []byte("ct:bob:"), 1)
	if _, err := Decode(bad, kr); err == nil {
		t.Error("a record moved to another member reads")
	}
}

// TestSnapshotAfterErasure: a snapshot taken before ada's erasure and
// read once ada's key is gone holds stand-ins, and the erasure applied
// next leaves the state a node that lived through it holds; a snapshot
// taken after the erasure needs no key of ada's and holds nothing of hers.
func TestSnapshotAfterErasure(t *testing.T) {
	st, after := personalScene(t)
	data, _ := st.Encode(&fakeRing{})
	gone := &fakeRing{gone: map[string]bool{"ada": true}}
	if _, err := st.Encode(gone); !errors.Is(err, errGone) {
		t.Fatalf("sealing with ada's key destroyed: %v", err)
	}
	old, err := Decode(data, gone)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := old.Profile("ada"); !ok || p != (Profile{Name: ErasedName}) {
		t.Errorf("ada's stand-in profile %+v", p)
	}
	erase := func() *Event { return &Event{Kind: EvErase, Member: "ada", At: after + 1} }
	seq := st.Seq() + 1
	st.Apply(seq, erase())
	old.Apply(seq, erase())
	live, _ := st.Encode(nil)
	if got, _ := old.Encode(nil); !bytes.Equal(got, live) {
		t.Fatal("the erasure applied to stand-ins leaves another state")
	}
	kr := &fakeRing{gone: map[string]bool{"ada": true}}
	erased, err := st.Encode(kr)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range adaSecrets {
		if bytes.Contains(erased, []byte(s)) {
			t.Errorf("the erased snapshot holds %q", s)
		}
	}
	if kr.seals != 1 {
		t.Errorf("%d seals after the erasure, want 1 (bob)", kr.seals)
	}
}

// TestSnapshotV7Reads: an RWSNAP7 snapshot (personal data in clear)
// reads as the state it was taken of.
func TestSnapshotV7Reads(t *testing.T) {
	st, _ := personalScene(t)
	v7, err := st.encode(&snapWriter{buf: []byte(snapMagicV7), v7: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(v7, []byte("ada@x.io")) {
		t.Fatal("RWSNAP7 held the aliases in clear: the test proves nothing")
	}
	old, err := Decode(v7, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := st.Encode(nil)
	if got, _ := old.Encode(nil); !bytes.Equal(got, want) {
		t.Fatal("an RWSNAP7 snapshot reads as another state")
	}
}
