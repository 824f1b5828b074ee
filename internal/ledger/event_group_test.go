package ledger

import (
	"bytes"
	"reflect"
	"testing"
)

// TestEncodeGroupEvent: an event joined from groups encoded apart decodes
// to the same event as EncodeEvent's encoding of it, strings that need
// escapes included, so either encoding applies alike on every node.
func TestEncodeGroupEvent(t *testing.T) {
	head := Event{Kind: EvGroup, At: 1700000000123, Waiter: "w.7", KeepIDs: 86400000, MaxHeld: 50}
	groups := []Group{
		{Board: "a", Items: []Item{{Member: "ann", Score: 1.5, ID: "x-1"}, {Member: `q"<&>\u2028é`, Score: -2, Subscore: 3}}},
		{Board: "b", Items: []Item{{Member: "bob", Score: 1e300}}},
		{Board: "a", Items: []Item{{Member: "ann", Score: 0, ID: "x-2"}}},
	}
	var enc [][]byte
	for _, g := range groups {
		b, err := EncodeGroup(g)
		if err != nil {
			t.Fatal(err)
		}
		enc = append(enc, b)
	}
	joined, err := EncodeGroupEvent(&head, enc)
	if err != nil {
		t.Fatal(err)
	}
	full := head
	full.Groups = groups
	whole, err := EncodeEvent(&full)
	if err != nil {
		t.Fatal(err)
	}
	if len(joined) != len(whole) {
		t.Errorf("joined %d bytes, whole %d: the sizes the committer counts differ", len(joined), len(whole))
	}
	a, errA := DecodeEvent(joined)
	b, errB := DecodeEvent(whole)
	if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("joined %s\ndecodes to %+v, %v\nwhole %s\ndecodes to %+v, %v", joined, a, errA, whole, b, errB)
	}
	if !reflect.DeepEqual(a.Groups, groups) {
		t.Fatalf("groups %+v, want %+v", a.Groups, groups)
	}
	s1, s2 := New(), New()
	for _, st := range []*State{s1, s2} {
		st.Apply(1, &Event{Kind: EvSettings, Board: "a", Settings: &Settings{}})
		st.Apply(2, &Event{Kind: EvSettings, Board: "b", Settings: &Settings{}})
	}
	o1, o2 := s1.Apply(3, a), s2.Apply(3, b)
	if !reflect.DeepEqual(o1.Groups, o2.Groups) || len(o1.Groups) != 3 {
		t.Fatalf("outcomes differ: %+v against %+v", o1.Groups, o2.Groups)
	}
	if !bytes.HasSuffix(joined, []byte("]}")) {
		t.Fatalf("joined %s", joined)
	}
}

// TestEncodeGroupEventRefuses: no groups, or groups given in the head
// as well, is the caller's mistake, told as an error.
func TestEncodeGroupEventRefuses(t *testing.T) {
	if _, err := EncodeGroupEvent(&Event{Kind: EvGroup}, nil); err == nil {
		t.Error("no groups: no error")
	}
	head := &Event{Kind: EvGroup, Groups: []Group{{Board: "a"}}}
	if _, err := EncodeGroupEvent(head, [][]byte{[]byte(`{"b":"a","i":[]}`)}); err == nil {
		t.Error("groups twice: no error")
	}
}
