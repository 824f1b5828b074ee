package identity

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// mustCheck fails the test if the Index breaks an invariant.
func mustCheck(t testing.TB, ix *Index) {
	t.Helper()
	if err := ix.Check(); err != nil {
		t.Fatal(err)
	}
}

// mustLink links or fails the test.
func mustLink(t testing.TB, ix *Index, member string, aliases ...string) LinkResult {
	t.Helper()
	res, err := ix.Link(member, aliases)
	if err != nil {
		t.Fatalf("Link(%q, %q): %v", member, aliases, err)
	}
	return res
}

func TestIntern(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(*Index)
		in      string
		want    uint32
		wantErr error
		wantMax uint32
	}{
		{"first id gets handle 1", nil, "u1", 1, nil, 1},
		{"existing id keeps its handle", func(ix *Index) { ix.Intern("u1"); ix.Intern("u2") }, "u1", 1, nil, 2},
		{"new id gets the next handle", func(ix *Index) { ix.Intern("u1"); ix.Intern("u2") }, "u3", 3, nil, 3},
		{"alias resolves to its member", func(ix *Index) { ix.Link("u1", []string{"email:a"}) }, "email:a", 1, nil, 1},
		{"retired id resolves to the survivor", func(ix *Index) { ix.Intern("u1"); ix.Link("u2", []string{"u1"}) }, "u1", 2, nil, 2},
		{"empty", nil, "", 0, ErrEmpty, 0},
		{"too long", nil, strings.Repeat("x", 129), 0, ErrTooLong, 0},
		{"invalid UTF-8", nil, "\xff", 0, ErrInvalid, 0},
		{"control character", nil, "a\nb", 0, ErrInvalid, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := New()
			if tt.setup != nil {
				tt.setup(ix)
			}
			got, err := ix.Intern(tt.in)
			if got != tt.want || !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("Intern(%q) = %d, %v; want %d, %v", tt.in, got, err, tt.want, tt.wantErr)
			}
			if ix.MaxHandle() != tt.wantMax {
				t.Fatalf("MaxHandle() = %d, want %d", ix.MaxHandle(), tt.wantMax)
			}
			mustCheck(t, ix)
		})
	}
}

func TestInternCopiesID(t *testing.T) {
	buf := []byte("player-1")
	var ix Index
	h, _ := ix.Intern(string(buf[:8]))
	copy(buf, "XXXXXXXX")
	if name, _ := ix.Name(h); name != "player-1" {
		t.Fatalf("Name = %q after the caller's buffer changed", name)
	}
}

func TestInternExistingDoesNotAllocate(t *testing.T) {
	ix := New()
	ix.Intern("p42")
	ix.Link("p7", []string{"email:p7@x.io"})
	for _, id := range []string{"p42", "email:p7@x.io"} {
		if n := testing.AllocsPerRun(100, func() { ix.Intern(id) }); n != 0 {
			t.Fatalf("Intern(%q) of an existing id allocates %v times", id, n)
		}
	}
}

func TestZeroIndex(t *testing.T) {
	var ix Index
	if _, ok := ix.Resolve("u1"); ok {
		t.Fatal("empty Index resolves u1")
	}
	if _, ok := ix.Name(0); ok || ix.Len() != 0 || ix.MaxHandle() != 0 || ix.Aliases(1) != nil {
		t.Fatal("empty Index reports a member")
	}
	mustCheck(t, &ix)
	if h, err := ix.Intern("u1"); h != 1 || err != nil {
		t.Fatalf("Intern on the zero Index = %d, %v", h, err)
	}
}

// lookups builds a small Index with an alias and a merge for lookup tables:
// u1 (1) with email:a; u2 (2) retired into u3 (3), whose aliases are u2 and d2.
func lookups(t *testing.T) *Index {
	ix := New()
	mustLink(t, ix, "u1", "email:a")
	mustLink(t, ix, "u2", "d2")
	mustLink(t, ix, "u3", "d2")
	return ix
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want uint32
		ok   bool
	}{
		{"member id", "u1", 1, true},
		{"alias", "email:a", 1, true},
		{"survivor id", "u3", 3, true},
		{"retired id", "u2", 3, true},
		{"alias of retired member", "d2", 3, true},
		{"unknown", "u4", 0, false},
		{"prefix of an id", "u", 0, false},
		{"empty", "", 0, false},
		{"invalid", "\xff", 0, false},
	}
	ix := lookups(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := ix.Resolve(tt.in); got != tt.want || ok != tt.ok {
				t.Fatalf("Resolve(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestHandleLookups(t *testing.T) {
	tests := []struct {
		name      string
		h         uint32
		wantName  string
		live      bool
		canonical uint32
		known     bool
		aliases   []string
	}{
		{"handle 0 means none", 0, "", false, 0, false, nil},
		{"live with alias", 1, "u1", true, 1, true, []string{"email:a"}},
		{"retired", 2, "", false, 3, true, nil},
		{"survivor lists retired id", 3, "u3", true, 3, true, []string{"d2", "u2"}},
		{"past the end", 4, "", false, 0, false, nil},
		{"far past the end", 1 << 31, "", false, 0, false, nil},
	}
	ix := lookups(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if name, ok := ix.Name(tt.h); name != tt.wantName || ok != tt.live {
				t.Errorf("Name(%d) = %q, %v; want %q, %v", tt.h, name, ok, tt.wantName, tt.live)
			}
			if c, ok := ix.Canonical(tt.h); c != tt.canonical || ok != tt.known {
				t.Errorf("Canonical(%d) = %d, %v; want %d, %v", tt.h, c, ok, tt.canonical, tt.known)
			}
			if got := ix.Aliases(tt.h); !slices.Equal(got, tt.aliases) {
				t.Errorf("Aliases(%d) = %q, want %q", tt.h, got, tt.aliases)
			}
		})
	}
	if ix.Len() != 2 || ix.MaxHandle() != 3 {
		t.Fatalf("Len, MaxHandle = %d, %d; want 2, 3", ix.Len(), ix.MaxHandle())
	}
}

func TestCompare(t *testing.T) {
	ix := New()
	for _, id := range []string{"b", "a", "ab", "B", "é", "e"} {
		ix.Intern(id) // handles 1..6
	}
	ix.Link("z", []string{"ab"}) // 7; retires 3
	tests := []struct {
		name string
		a, b uint32
		want int
	}{
		{"same handle", 1, 1, 0},
		{"bytewise, not handle order", 1, 2, 1},
		{"prefix first", 2, 3, -1},
		{"upper case before lower", 4, 1, -1},
		{"multibyte after ASCII", 5, 6, 1},
		{"retired keeps its id", 3, 7, -1},
		{"known before unknown", 7, 8, -1},
		{"unknown after known", 0, 1, 1},
		{"unknown by number", 9, 8, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ix.Compare(tt.a, tt.b); got != tt.want {
				t.Fatalf("Compare(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
			if got := ix.Compare(tt.b, tt.a); got != -tt.want {
				t.Fatalf("Compare(%d, %d) = %d, want %d", tt.b, tt.a, got, -tt.want)
			}
		})
	}
}

func TestFull(t *testing.T) {
	tests := []struct {
		name string
		op   func(*Index) error
	}{
		{"Intern a new id", func(ix *Index) error { _, err := ix.Intern("c"); return err }},
		{"Link a new member", func(ix *Index) error { _, err := ix.Link("c", nil); return err }},
		{"Link a new alias", func(ix *Index) error { _, err := ix.Link("a", []string{"x"}); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := &Index{limit: 2}
			ix.Intern("a")
			ix.Intern("b")
			if err := tt.op(ix); !errors.Is(err, ErrFull) {
				t.Fatalf("got %v, want ErrFull", err)
			}
			if h, err := ix.Intern("b"); h != 2 || err != nil {
				t.Fatalf("Intern of an existing id when full = %d, %v", h, err)
			}
			if ix.MaxHandle() != 2 || len(ix.aliases) != 0 {
				t.Fatal("a refused call changed the Index")
			}
			mustCheck(t, ix)
		})
	}
}

// TestGrowth interns enough ids to resize the table several times and
// checks every lookup afterwards.
func TestGrowth(t *testing.T) {
	ix := New()
	const n = 5000
	for i := range n {
		if h, _ := ix.Intern(fmt.Sprint("m", i)); h != uint32(i+1) {
			t.Fatalf("id %d got handle %d", i, h)
		}
	}
	for i := range n {
		if h, ok := ix.Resolve(fmt.Sprint("m", i)); !ok || h != uint32(i+1) {
			t.Fatalf("Resolve(m%d) = %d, %v", i, h, ok)
		}
	}
	mustCheck(t, ix)
}

// TestConcurrentReads runs every read method from several goroutines at
// once; under -race it proves that reads write nothing shared.
func TestConcurrentReads(t *testing.T) {
	ix := lookups(t)
	for i := range 200 {
		mustLink(t, ix, fmt.Sprint("m", i), fmt.Sprint("a", i), fmt.Sprint("m", i/2))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 300 {
				h, _ := ix.Resolve(fmt.Sprint("a", (i+g)%200))
				ix.Name(h)
				ix.Canonical(uint32(i))
				ix.Aliases(h)
				ix.Compare(h, uint32(i))
				ix.Len()
			}
			if _, err := ix.MarshalBinary(); err != nil {
				t.Error(err)
			}
			if err := ix.Check(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
