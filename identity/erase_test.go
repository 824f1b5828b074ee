package identity

import (
	"fmt"
	"slices"
	"testing"
)

func TestEraseRenamesLinkedAliasesOnly(t *testing.T) {
	ix := New()
	if _, err := ix.Link("ann", []string{"email:ann@x.io", "phone:+356"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Link("ann", []string{"old-ann"}); err != nil { // old-ann: a new alias
		t.Fatal(err)
	}
	other, _ := ix.Intern("bob")
	if _, err := ix.Link("ann", []string{"bob"}); err != nil { // merge bob into ann
		t.Fatal(err)
	}
	h, _ := ix.Resolve("ann")
	n := ix.Erase(h, nil, func(i int) string { return fmt.Sprintf("erased.7.%d", i) })
	if n != 3 {
		t.Fatalf("renamed %d, want 3 (bob is a former id and stays)", n)
	}
	for _, gone := range []string{"email:ann@x.io", "phone:+356", "old-ann"} {
		if _, ok := ix.Resolve(gone); ok {
			t.Errorf("%q still resolves", gone)
		}
	}
	if got, _ := ix.Resolve("bob"); got != h {
		t.Errorf("bob resolves to %d, want %d", got, h)
	}
	if c, _ := ix.Canonical(other); c != h {
		t.Errorf("retired bob's canonical %d, want %d", c, h)
	}
	want := []string{"bob", "erased.7.0", "erased.7.1", "erased.7.2"}
	if got := ix.Aliases(h); !slices.Equal(got, want) {
		t.Errorf("aliases %q, want %q", got, want)
	}
	if err := ix.Check(); err != nil {
		t.Fatal(err)
	}
	data, _ := ix.MarshalBinary()
	back := New()
	if err := back.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if got := back.Aliases(h); !slices.Equal(got, want) {
		t.Errorf("decoded aliases %q, want %q", got, want)
	}
	if _, err := ix.Link("carol", []string{"email:ann@x.io"}); err != nil { // the old alias is free again
		t.Fatal(err)
	}
	if c, _ := ix.Resolve("email:ann@x.io"); c == h {
		t.Error("the erased alias still names ann")
	}
}

// TestRemoveKeepsEveryOtherKey removes keys from a crowded table and
// checks that every other key still resolves (backward shift).
func TestRemoveKeepsEveryOtherKey(t *testing.T) {
	ix := New()
	for i := range 2000 {
		if _, err := ix.Link(fmt.Sprintf("m%d", i), []string{fmt.Sprintf("a%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2000; i += 3 {
		h, _ := ix.Resolve(fmt.Sprintf("m%d", i))
		ix.Erase(h, nil, func(int) string { return fmt.Sprintf("gone%d", i) })
	}
	for i := range 2000 {
		h, _ := ix.Resolve(fmt.Sprintf("m%d", i))
		_, ok := ix.Resolve(fmt.Sprintf("a%d", i))
		if ok == (i%3 == 0) {
			t.Fatalf("a%d resolves: %v", i, ok)
		}
		if i%3 == 0 {
			if g, _ := ix.Resolve(fmt.Sprintf("gone%d", i)); g != h {
				t.Fatalf("gone%d resolves to %d, want %d", i, g, h)
			}
		}
	}
	if err := ix.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestEraseIgnoresNames: two Indexes linked alike but for the aliases'
// names (one knows them, one only stand-ins sorting otherwise) encode alike
// once the member is erased: pseudonyms follow alias numbers, not names.
func TestEraseIgnoresNames(t *testing.T) {
	var enc [][]byte
	for _, names := range [][]string{{"email:a@x.io", "phone:1", "zz"}, {"sealed.f", "sealed.a", "sealed.0"}} {
		ix := New()
		if _, err := ix.Link("ann", names); err != nil {
			t.Fatal(err)
		}
		h, _ := ix.Resolve("ann")
		ix.Erase(h, nil, func(i int) string { return fmt.Sprintf("erased.7.%d", i) })
		data, _ := ix.MarshalBinary()
		enc = append(enc, data)
	}
	if !slices.Equal(enc[0], enc[1]) {
		t.Fatal("the erasure renamed by name")
	}
}
