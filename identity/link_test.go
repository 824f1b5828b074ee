package identity

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// call is one Link call of a test's setup.
type call struct {
	member  string
	aliases []string
}

func TestLink(t *testing.T) {
	tests := []struct {
		name    string
		setup   []call
		member  string
		aliases []string
		want    LinkResult
		resolve map[string]uint32   // every identifier afterwards
		groups  map[uint32][]string // Aliases of each live handle afterwards
		live    int
	}{
		{
			name: "new member without aliases", member: "u1",
			want: LinkResult{Handle: 1}, resolve: map[string]uint32{"u1": 1}, live: 1,
		},
		{
			name: "new member with aliases", member: "u1", aliases: []string{"email:a", "device:1"},
			want:    LinkResult{Handle: 1},
			resolve: map[string]uint32{"u1": 1, "email:a": 1, "device:1": 1},
			groups:  map[uint32][]string{1: {"device:1", "email:a"}}, live: 1,
		},
		{
			name: "alias already linked to the member is a no-op", setup: []call{{"u1", []string{"e"}}},
			member: "u1", aliases: []string{"e"},
			want: LinkResult{Handle: 1}, resolve: map[string]uint32{"u1": 1, "e": 1},
			groups: map[uint32][]string{1: {"e"}}, live: 1,
		},
		{
			name: "member linked to itself is a no-op", member: "u1", aliases: []string{"u1"},
			want: LinkResult{Handle: 1}, resolve: map[string]uint32{"u1": 1}, live: 1,
		},
		{
			name: "repeated alias in one call", member: "u1", aliases: []string{"e", "e"},
			want: LinkResult{Handle: 1}, resolve: map[string]uint32{"u1": 1, "e": 1},
			groups: map[uint32][]string{1: {"e"}}, live: 1,
		},
		{
			name: "alias of another member merges it into member", setup: []call{{"u1", []string{"e1"}}},
			member: "u2", aliases: []string{"e1"},
			want:    LinkResult{Handle: 2, Merges: []Merge{{From: 1, Into: 2}}},
			resolve: map[string]uint32{"u1": 2, "u2": 2, "e1": 2},
			groups:  map[uint32][]string{2: {"e1", "u1"}}, live: 1,
		},
		{
			name: "another member's id as alias merges it", setup: []call{{"u1", nil}, {"u2", nil}},
			member: "u1", aliases: []string{"u2"},
			want:    LinkResult{Handle: 1, Merges: []Merge{{From: 2, Into: 1}}},
			resolve: map[string]uint32{"u1": 1, "u2": 1},
			groups:  map[uint32][]string{1: {"u2"}}, live: 1,
		},
		{
			name: "member that is an alias stands for its owner", setup: []call{{"u1", []string{"e1"}}},
			member: "e1", aliases: []string{"d1"},
			want:    LinkResult{Handle: 1},
			resolve: map[string]uint32{"u1": 1, "e1": 1, "d1": 1},
			groups:  map[uint32][]string{1: {"d1", "e1"}}, live: 1,
		},
		{
			name:   "alias of alias merges into the alias's owner",
			setup:  []call{{"u1", []string{"e1"}}, {"u2", []string{"d2"}}},
			member: "e1", aliases: []string{"d2"},
			want:    LinkResult{Handle: 1, Merges: []Merge{{From: 2, Into: 1}}},
			resolve: map[string]uint32{"u1": 1, "e1": 1, "u2": 1, "d2": 1},
			groups:  map[uint32][]string{1: {"d2", "e1", "u2"}}, live: 1,
		},
		{
			name:   "member whose aliases point elsewhere",
			setup:  []call{{"u1", []string{"a1", "a2"}}, {"u2", []string{"b1"}}},
			member: "u2", aliases: []string{"a2"},
			want:    LinkResult{Handle: 2, Merges: []Merge{{From: 1, Into: 2}}},
			resolve: map[string]uint32{"u1": 2, "a1": 2, "a2": 2, "u2": 2, "b1": 2},
			groups:  map[uint32][]string{2: {"a1", "a2", "b1", "u1"}}, live: 1,
		},
		{
			name:   "chain of merges",
			setup:  []call{{"u1", []string{"a1"}}, {"u2", []string{"u1"}}, {"u3", []string{"u2"}}},
			member: "u4", aliases: []string{"a1"},
			want:    LinkResult{Handle: 4, Merges: []Merge{{From: 3, Into: 4}}},
			resolve: map[string]uint32{"u1": 4, "a1": 4, "u2": 4, "u3": 4, "u4": 4},
			groups:  map[uint32][]string{4: {"a1", "u1", "u2", "u3"}}, live: 1,
		},
		{
			name:   "several merges in alias order",
			setup:  []call{{"u1", nil}, {"u2", nil}, {"u3", nil}},
			member: "u4", aliases: []string{"u3", "u1", "x", "u2"},
			want:    LinkResult{Handle: 4, Merges: []Merge{{3, 4}, {1, 4}, {2, 4}}},
			resolve: map[string]uint32{"u1": 4, "u2": 4, "u3": 4, "u4": 4, "x": 4},
			groups:  map[uint32][]string{4: {"u1", "u2", "u3", "x"}}, live: 1,
		},
		{
			name:   "an alias merged earlier in the call is a no-op",
			setup:  []call{{"u1", []string{"a1"}}},
			member: "u2", aliases: []string{"u1", "a1"},
			want:    LinkResult{Handle: 2, Merges: []Merge{{1, 2}}},
			resolve: map[string]uint32{"u1": 2, "a1": 2, "u2": 2},
			groups:  map[uint32][]string{2: {"a1", "u1"}}, live: 1,
		},
		{
			name:   "retired id as member stands for the survivor",
			setup:  []call{{"u1", nil}, {"u2", []string{"u1"}}},
			member: "u1", aliases: []string{"x"},
			want:    LinkResult{Handle: 2},
			resolve: map[string]uint32{"u1": 2, "u2": 2, "x": 2},
			groups:  map[uint32][]string{2: {"u1", "x"}}, live: 1,
		},
		{
			name:   "unrelated members stay apart",
			setup:  []call{{"u1", []string{"a1"}}},
			member: "u2", aliases: []string{"b2"},
			want:    LinkResult{Handle: 2},
			resolve: map[string]uint32{"u1": 1, "a1": 1, "u2": 2, "b2": 2},
			groups:  map[uint32][]string{1: {"a1"}, 2: {"b2"}}, live: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := New()
			for _, c := range tt.setup {
				mustLink(t, ix, c.member, c.aliases...)
			}
			got := mustLink(t, ix, tt.member, tt.aliases...)
			if got.Handle != tt.want.Handle || !slices.Equal(got.Merges, tt.want.Merges) {
				t.Fatalf("Link = %+v, want %+v", got, tt.want)
			}
			checkState(t, ix, tt.resolve, tt.groups, tt.live)
		})
	}
}

// checkState compares every lookup of ix with the expected state.
func checkState(t *testing.T, ix *Index, resolve map[string]uint32, groups map[uint32][]string, live int) {
	t.Helper()
	for id, want := range resolve {
		if h, ok := ix.Resolve(id); !ok || h != want {
			t.Errorf("Resolve(%q) = %d, %v; want %d", id, h, ok, want)
		}
	}
	for h := uint32(1); h <= ix.MaxHandle(); h++ {
		if got := ix.Aliases(h); !slices.Equal(got, groups[h]) {
			t.Errorf("Aliases(%d) = %q, want %q", h, got, groups[h])
		}
	}
	if ix.Len() != live {
		t.Errorf("Len() = %d, want %d", ix.Len(), live)
	}
	mustCheck(t, ix)
}

func TestLinkErrors(t *testing.T) {
	tests := []struct {
		name    string
		member  string
		aliases []string
		want    error
		field   string
	}{
		{"empty member", "", nil, ErrEmpty, "member: "},
		{"long member", strings.Repeat("m", 129), nil, ErrTooLong, "member: "},
		{"invalid member", "m\xff", nil, ErrInvalid, "member: "},
		{"empty alias", "u1", []string{"ok", ""}, ErrEmpty, "aliases[1]: "},
		{"long alias", "u1", []string{strings.Repeat("a", 129)}, ErrTooLong, "aliases[0]: "},
		{"control character in alias", "u1", []string{"a", "b", "c\x07"}, ErrInvalid, "aliases[2]: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := New()
			mustLink(t, ix, "u0", "a0")
			_, err := ix.Link(tt.member, tt.aliases)
			if !errors.Is(err, tt.want) || !strings.HasPrefix(err.Error(), tt.field) {
				t.Fatalf("Link error = %v, want %v naming %q", err, tt.want, tt.field)
			}
			checkState(t, ix, map[string]uint32{"u0": 1, "a0": 1}, map[uint32][]string{1: {"a0"}}, 1)
			if ix.MaxHandle() != 1 {
				t.Fatalf("a refused Link created handles: MaxHandle() = %d", ix.MaxHandle())
			}
		})
	}
}

// TestLinkSharedPlaceholder is the back end that links one placeholder alias
// ("device:0") to every new member: each link merges everyone so far into
// the newest member. Union by size keeps each merge O(1) (see
// BenchmarkLink/shared-placeholder); this checks that it stays correct.
func TestLinkSharedPlaceholder(t *testing.T) {
	ix := New()
	const n = 2000
	for i := 1; i <= n; i++ {
		res := mustLink(t, ix, fmt.Sprint("u", i), "device:0")
		if want := []Merge{{uint32(i - 1), uint32(i)}}; i > 1 && !slices.Equal(res.Merges, want) || res.Handle != uint32(i) {
			t.Fatalf("link %d = %+v, want handle %d merging %v", i, res, i, want)
		}
	}
	if h, _ := ix.Resolve("u1"); h != n || ix.Len() != 1 || len(ix.Aliases(n)) != n {
		t.Fatalf("u1 → %d, Len %d, %d aliases", h, ix.Len(), len(ix.Aliases(n)))
	}
	mustCheck(t, ix)
}

// Label names a handle after a merge retired it, where Name does not.
func TestLabelOfRetired(t *testing.T) {
	ix := New()
	a, _ := ix.Intern("ann")
	b, _ := ix.Intern("bob")
	if _, err := ix.Link("ann", []string{"bob"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := ix.Name(b); ok {
		t.Fatal("bob's handle still live after the merge")
	}
	if got, ok := ix.Label(b); !ok || got != "bob" {
		t.Fatalf("Label(retired) = %q, %v", got, ok)
	}
	if got, ok := ix.Label(a); !ok || got != "ann" {
		t.Fatalf("Label(live) = %q, %v", got, ok)
	}
	if _, ok := ix.Label(0); ok {
		t.Fatal("Label(0) answered")
	}
	if _, ok := ix.Label(99); ok {
		t.Fatal("Label(unknown) answered")
	}
}
