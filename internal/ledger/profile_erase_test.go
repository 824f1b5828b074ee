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
	data, err := st.Encode(nil)
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
// that follows leaves the same snapshot as on a node that had the key
// (pseudonyms follow the aliases' order, not their names or stand-ins).
func TestUnsealPlaceholders(t *testing.T) {
	live, _ := finalScene(t)
	replay, _ := finalScene(t)
	open := func(owner string, ct []byte) ([]byte, bool) {
		return bytes.TrimPrefix(ct, []byte("sealed:")), true
	}
	gone := func(string, []byte) ([]byte, bool) { return nil, false }
	evs := func() []*Event {
		return []*Event{
			{Kind: EvLink, Member: "ada", Sealed: &Sealed{Owner: "ada", Aliases: [][]byte{[]byte("sealed:email:a@x.io"), []byte("sealed:phone:1"), []byte("sealed:zz")}}, At: 1},
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
	a, _ := live.Encode(nil)
	b, _ := replay.Encode(nil)
	if !bytes.Equal(a, b) {
		t.Fatal("a replay without the key ends in another state than the live node")
	}
}

// TestByIDSameState: a state fed submissions and a removal by a linked
// alias as the hub logs them (ByID, OwnerOf: by the member's id) and a
// twin fed the alias itself (what apply resolves) encode byte for byte
// alike. ByID leaves the caller's items alone and keeps a member that
// names nobody (a new member's id) as given.
func TestByIDSameState(t *testing.T) {
	const alias = "email:ada@x.io"
	var enc [][]byte
	for _, byID := range []bool{true, false} {
		s, at := New(), date(2026, 1, 1).UnixMilli()
		s.Apply(1, &Event{Kind: EvSettings, Board: "b", Settings: mustNormalize(t, Settings{})})
		s.Apply(2, &Event{Kind: EvSettings, Board: "c", Settings: mustNormalize(t, Settings{})})
		s.Apply(3, &Event{Kind: EvSubmit, Board: "b", Items: []Item{{Member: "ada", Score: 1}}, At: at})
		mustApply(t, s, &Event{Kind: EvLink, Member: "ada", Aliases: []string{alias}, At: at})
		items, member := []Item{{Member: alias, Score: 7, ID: "s1"}, {Member: "new", Score: 2}}, alias
		logged := items
		if byID {
			logged, member = s.ByID(items), s.OwnerOf(alias)
			if items[0].Member != alias || logged[0].Member != "ada" || logged[1].Member != "new" || member != "ada" {
				t.Fatalf("ByID: %+v from %+v; OwnerOf %q", logged, items, member)
			}
		}
		s.Apply(5, &Event{Kind: EvSubmit, Board: "b", Items: logged, At: at})
		s.Apply(6, &Event{Kind: EvSubmit, Board: "c", Items: logged, At: at})
		mustApply(t, s, &Event{Kind: EvRemove, Board: "c", Member: member, At: at})
		data, err := s.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		enc = append(enc, data)
	}
	if !bytes.Equal(enc[0], enc[1]) {
		t.Fatal("by alias and by id: different states")
	}
}
