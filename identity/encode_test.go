package identity

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"testing"
	"unsafe"
)

var (
	_ encoding.BinaryAppender    = (*Index)(nil)
	_ encoding.BinaryMarshaler   = (*Index)(nil)
	_ encoding.BinaryUnmarshaler = (*Index)(nil)
)

// sample builds an Index with live members, aliases, a multibyte id and a
// chain of merges.
func sample(t testing.TB) *Index {
	ix := New()
	mustLink(t, ix, "u1", "email:ann@x.io", "device:42")
	mustLink(t, ix, "u2", "device:7")
	mustLink(t, ix, "jürgen")
	mustLink(t, ix, "u3", "u2")
	mustLink(t, ix, "u4", "device:42", "u3")
	return ix
}

// frame wraps a snapshot body in header and checksum.
func frame(body []byte) []byte {
	data := append([]byte(magic+"\x01"), body...)
	return binary.LittleEndian.AppendUint32(data, crc32.Checksum(data, castagnoli))
}

// body encodes parts: an int as a uvarint, a string as its raw bytes.
func body(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch p := p.(type) {
		case int:
			b = binary.AppendUvarint(b, uint64(p))
		case string:
			b = append(b, p...)
		}
	}
	return b
}

// sameIndex fails unless a and b answer every lookup alike.
func sameIndex(t testing.TB, a, b *Index) {
	t.Helper()
	if a.Len() != b.Len() || a.MaxHandle() != b.MaxHandle() {
		t.Fatalf("Len, MaxHandle = %d, %d vs %d, %d", a.Len(), a.MaxHandle(), b.Len(), b.MaxHandle())
	}
	for h := range a.MaxHandle() + 2 {
		na, oka := a.Name(h)
		nb, okb := b.Name(h)
		ca, _ := a.Canonical(h)
		cb, _ := b.Canonical(h)
		if na != nb || oka != okb || ca != cb || !slices.Equal(a.Aliases(h), b.Aliases(h)) {
			t.Fatalf("handle %d differs", h)
		}
		for _, id := range append(a.Aliases(h), na) {
			ha, _ := a.Resolve(id)
			if hb, _ := b.Resolve(id); ha != hb {
				t.Fatalf("Resolve(%q) = %d vs %d", id, ha, hb)
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		ix   *Index
	}{
		{"zero Index", &Index{}},
		{"one member", func() *Index { ix := New(); ix.Intern("p"); return ix }()},
		{"aliases and merges", sample(t)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := tt.ix.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			mustCheck(t, got)
			sameIndex(t, tt.ix, got)
			again, _ := got.AppendBinary([]byte("prefix"))
			if !bytes.Equal(again[6:], data) {
				t.Fatal("re-encoding differs")
			}
			// Both go on to give the same handles and merges.
			for _, c := range []call{{"u9", []string{"u1", "new"}}, {"jürgen", []string{"u9"}}} {
				ra := mustLink(t, tt.ix, c.member, c.aliases...)
				rb := mustLink(t, got, c.member, c.aliases...)
				if ra.Handle != rb.Handle || !slices.Equal(ra.Merges, rb.Merges) {
					t.Fatalf("Link after decode = %+v, want %+v", rb, ra)
				}
			}
			sameIndex(t, tt.ix, got)
		})
	}
}

func TestDecodeSharesRetiredIDs(t *testing.T) {
	ix, err := Decode(mustMarshal(t, sample(t)))
	if err != nil {
		t.Fatal(err)
	}
	for h := uint32(1); h <= ix.MaxHandle(); h++ {
		if ix.isLive(h) {
			continue
		}
		n := ix.lookup(ix.names[h]) &^ aliasBit
		if a := ix.aliases[n].name; unsafe.StringData(a) != unsafe.StringData(ix.names[h]) {
			t.Fatalf("retired handle %d does not share its id with alias %d", h, n)
		}
	}
}

func mustMarshal(t testing.TB, ix *Index) []byte {
	data, err := ix.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestUnmarshalBinary(t *testing.T) {
	var ix Index
	ix.Intern("keep")
	if err := ix.UnmarshalBinary([]byte("junk")); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("UnmarshalBinary(junk) = %v", err)
	}
	if h, ok := ix.Resolve("keep"); !ok || h != 1 {
		t.Fatal("a failed UnmarshalBinary changed the Index")
	}
	if err := ix.UnmarshalBinary(mustMarshal(t, sample(t))); err != nil {
		t.Fatal(err)
	}
	sameIndex(t, sample(t), &ix)
}

func TestDecodeCorrupt(t *testing.T) {
	good := mustMarshal(t, sample(t))
	flipped := slices.Clone(good)
	flipped[8] ^= 1
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"shorter than header and checksum", []byte("RWID\x01")},
		{"bad magic", append([]byte("RWIX"), good[4:]...)},
		{"unknown version", append([]byte("RWID\x02"), good[5:]...)},
		{"checksum mismatch", flipped},
		{"truncated", frame(good[5 : len(good)-6])},
		{"trailing bytes", frame(append(slices.Clone(good[5:len(good)-4]), 0))},
		{"no sections", frame(nil)},
		{"handle count past the data", frame(body(9, 0))},
		{"overlong varint", frame(body("\x80\x00", 0))},
		{"overflowing varint", frame(body("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"))},
		{"empty id", frame(body(1, 0, 0))},
		{"id too long", frame(body(1, 129<<1, string(make([]byte, 129)), 0))},
		{"id with control character", frame(body(1, 2<<1, "a\n", 0))},
		{"duplicate id", frame(body(2, 1<<1, "a", 1<<1, "a", 0))},
		{"alias duplicates an id", frame(body(1, 1<<1, "a", 1, 1, "a", 1))},
		{"duplicate alias", frame(body(1, 1<<1, "a", 2, 1, "b", 1, 1, "b", 1))},
		{"alias owner 0", frame(body(1, 1<<1, "a", 1, 1, "b", 0))},
		{"alias owner past the handles", frame(body(1, 1<<1, "a", 1, 1, "b", 2))},
		{"alias owner retired", frame(body(2, 1<<1, "a", 1<<1|1, "b", 1, 1, "b", 2))},
		{"retired id not an alias", frame(body(2, 1<<1, "a", 1<<1|1, "b", 0))},
		{"retired id is a live id", frame(body(2, 1<<1, "a", 1<<1|1, "a", 0))},
		{"two retired share an id", frame(body(3, 1<<1, "a", 1<<1|1, "b", 1<<1|1, "b", 1, 1, "b", 1))},
		{"alias count past the data", frame(body(1, 1<<1, "a", 5, 1, "b", 1))},
		{"alias length past the data", frame(body(1, 1<<1, "a", 1, 9, "b", 1))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, err := Decode(tt.data)
			if !errors.Is(err, ErrCorrupt) || ix != nil {
				t.Fatalf("Decode = %v, %v; want ErrCorrupt", ix, err)
			}
		})
	}
}

func TestDecodeMinimal(t *testing.T) {
	ix, err := Decode(frame(body(2, 1<<1, "a", 1<<1|1, "b", 1, 1, "b", 1)))
	if err != nil {
		t.Fatal(err)
	}
	mustCheck(t, ix)
	if h, ok := ix.Resolve("b"); !ok || h != 1 || ix.Len() != 1 {
		t.Fatalf("Resolve(b) = %d, %v; Len() = %d", h, ok, ix.Len())
	}
	if h, _ := ix.Intern("c"); h != 3 {
		t.Fatalf("next handle = %d, want 3", h)
	}
}

// fuzzSeeds are valid snapshots and near misses for both fuzz targets.
func fuzzSeeds(f *testing.F) [][]byte {
	seeds := [][]byte{mustMarshal(f, &Index{}), mustMarshal(f, sample(f))}
	big := New()
	for i := range 100 {
		big.Link(fmt.Sprint("m", i%37), []string{fmt.Sprint("a", i%53), fmt.Sprint("m", i%11)})
	}
	seeds = append(seeds, mustMarshal(f, big), []byte("RWID\x01"), frame(body(1, 1<<1, "a", 0)))
	return seeds
}

// checkDecoded holds whatever Decode returns for data to its contract.
func checkDecoded(t *testing.T, data []byte) {
	ix, err := Decode(data)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		return
	}
	if err := ix.Check(); err != nil {
		t.Fatalf("Decode accepted an Index that fails Check: %v", err)
	}
	if again := mustMarshal(t, ix); !bytes.Equal(again, data) {
		t.Fatalf("accepted snapshot re-encodes differently")
	}
	if _, err := ix.Link("fuzz-member", []string{"fuzz-alias"}); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, ix)
}

// FuzzDecode feeds arbitrary bytes to Decode: it must return an Index that
// passes Check and re-encodes to the same bytes, or an ErrCorrupt error.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(checkDecoded)
}

// FuzzDecodeBody frames arbitrary bytes with a valid header and checksum,
// so mutations reach the parser instead of failing the checksum.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		if len(s) >= headerLen+crcLen {
			f.Add(s[headerLen : len(s)-crcLen])
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecoded(t, frame(b)) })
}
