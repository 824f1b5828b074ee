package identity

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestMaskedRoundTrip: an Index written with its linked aliases masked
// holds none of their names, lists them (EachLinked: not the former id of
// a merged handle), and decodes with the names handed back into the Index
// encoded; a name missing or invalid is ErrCorrupt.
func TestMaskedRoundTrip(t *testing.T) {
	ix := New()
	if _, err := ix.Link("ann", []string{"email:ann@x.io", "phone:+356"}); err != nil {
		t.Fatal(err)
	}
	ix.Intern("bob")
	if _, err := ix.Link("ann", []string{"bob"}); err != nil { // bob: a former id, not linked
		t.Fatal(err)
	}
	if _, err := ix.Link("cy", []string{"email:cy@x.io"}); err != nil {
		t.Fatal(err)
	}
	names := map[uint32]string{}
	ix.EachLinked(func(n uint32, name string, owner uint32) {
		if o, _ := ix.Resolve(name); o != owner {
			t.Errorf("alias %q: owner %d, resolves to %d", name, owner, o)
		}
		names[n] = name
	})
	if len(names) != 3 {
		t.Fatalf("linked aliases %v, want the three linked (not bob)", names)
	}
	data, _ := ix.AppendMasked(nil, func(n uint32) bool { _, ok := names[n]; return ok })
	if bytes.Contains(data, []byte("x.io")) || bytes.Contains(data, []byte("+356")) || !bytes.Contains(data, []byte("bob")) {
		t.Fatalf("masked encoding %q", data)
	}
	if _, err := Decode(data); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Decode of a masked encoding: %v", err)
	}
	back, err := DecodeMasked(data, func(n, _ uint32) (string, bool) { s, ok := names[n]; return s, ok })
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ix.MarshalBinary()
	if got, _ := back.MarshalBinary(); !bytes.Equal(got, want) {
		t.Fatal("the masked round trip changed the Index")
	}
	if clear, _ := ix.AppendMasked(nil, func(uint32) bool { return false }); !bytes.Equal(clear, want) {
		t.Fatal("a masked encoding that hides nothing differs from AppendBinary's")
	}
	if err := back.Check(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(n, _ uint32) (string, bool){
		func(n, _ uint32) (string, bool) { return "", false },
		func(n, _ uint32) (string, bool) { return strings.Repeat("x", MaxLen+1), true },
		func(n, _ uint32) (string, bool) { return "bob", true }, // a duplicate
	} {
		if _, err := DecodeMasked(data, bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("a bad name decodes: %v", err)
		}
	}
}
