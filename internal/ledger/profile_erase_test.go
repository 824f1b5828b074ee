package ledger

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestEraseRemovesPersonalData: after EvErase the profile, the aliases
// and the name the ended board recorded are gone from reads and from the
// snapshot; entries and scores stay; a twin state that never erased
// keeps everything.
func TestEraseRemovesPersonalData(t *testing.T) {
	st, end := finalScene(t)
	twin, _ := finalScene(t)
	after := end + 1000
	for _, s := range []*State{st, twin} {
		mustApply(t, s, &Event{Kind: EvLink, Member: "ada", Aliases: []string{"email:ada@x.io"}, At: after})
		mustApply(t, s, &Event{Kind: EvProfile, Member: "ada", Profile: &Profile{Name: "Ada L", Avatar: "https://cdn.example/ada.png"}, At: after})
	}
	mustApply(t, st, &Event{Kind: EvErase, Member: "email:ada@x.io", At: after + 1})
	if _, ok := st.Profile("ada"); ok {
		t.Error("the profile survived")
	}
	if _, ok := st.Identity("email:ada@x.io"); ok {
		t.Error("the alias still resolves")
	}
	if got := topNames(t, st, "cup", after+5000); got["ada"] != "" {
		t.Errorf("cup's final standings still name ada %q", got["ada"])
	}
	pd, ok := st.PersonalData("ada")
	if !ok || pd.Profile != nil || len(pd.Entries) != 2 || pd.Entries[0].Board != "cup" || pd.Entries[0].Score != 9 {
		t.Fatalf("export after erasure: %+v", pd)
	}
	if want := []string{"erased.8.0"}; !slices.Equal(pd.Aliases, want) {
		t.Errorf("aliases %q, want %q", pd.Aliases, want)
	}
	data, err := st.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Ada", "cdn.example", "ada@x.io"} {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("the snapshot holds %q", s)
		}
	}
	if pd, _ := twin.PersonalData("ada"); pd.Profile == nil || pd.Profile.Name != "Ada L" || !slices.Equal(pd.Aliases, []string{"email:ada@x.io"}) {
		t.Errorf("the twin lost its data: %+v", pd)
	}
	// Erasing a member that names nobody is no error.
	mustApply(t, st, &Event{Kind: EvErase, Member: "nobody", At: after + 2})
}

// TestUnsealPlaceholders: a sealed event whose key is gone applies as a
// change all the same (the same seqs as the live node's), and the erasure
// that follows leaves the same snapshot as on a node that had the key.
func TestUnsealPlaceholders(t *testing.T) {
	live, _ := finalScene(t)
	replay, _ := finalScene(t)
	open := func(owner string, ct []byte) ([]byte, bool) {
		return bytes.TrimPrefix(ct, []byte("sealed:")), true
	}
	gone := func(string, []byte) ([]byte, bool) { return nil, false }
	evs := func() []*Event {
		return []*Event{
			{Kind: EvLink, Member: "ada", Sealed: &Sealed{Owner: "ada", Aliases: [][]byte{[]byte("sealed:email:a@x.io")}}, At: 1},
			{Kind: EvProfile, Member: "ada", Sealed: &Sealed{Owner: "ada", Profile: []byte(`sealed:{"name":"Ada"}`)}, At: 2},
			{Kind: EvErase, Member: "ada", At: 3},
		}
	}
	for i, ev := range evs() {
		ev.Unseal(open)
		mustApply(t, live, ev)
		rev := evs()[i]
		rev.Unseal(gone)
		if ev.Kind == EvProfile && rev.Profile.Name != ErasedName {
			t.Errorf("placeholder %q", rev.Profile.Name)
		}
		if ev.Kind == EvLink && !strings.HasPrefix(rev.Aliases[0], "sealed.") {
			t.Errorf("placeholder alias %q", rev.Aliases[0])
		}
		mustApply(t, replay, rev)
	}
	a, _ := live.Encode()
	b, _ := replay.Encode()
	if !bytes.Equal(a, b) {
		t.Fatal("a replay without the key ends in another state than the live node")
	}
}
