package hub

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestLinkNoMergeRefusedAtApply: a link that may not merge fails with
// ErrForbidden naming the alias when an alias names another member, and
// changes nothing: not the boards, not the identities.
func TestLinkNoMergeRefusedAtApply(t *testing.T) {
	h := startHub(t, Config{})
	ctx := testCtx(t)
	mustPut(t, h, "t1", "poker-final", Settings{})
	mustPut(t, h, "t1", "slots-1", Settings{})
	mustSubmit(t, h, "t1", "poker-final", Item{Member: "champion", Score: 1000}, Item{Member: "second", Score: 10})
	mustSubmit(t, h, "t1", "slots-1", Item{Member: "thief", Score: 1})
	before := top(t, h, Loc{Tenant: "t1", Board: "poker-final"})

	cases := []struct {
		member  string
		aliases []string
	}{
		{"thief", []string{"champion"}},               // the attack
		{"nobody-yet", []string{"fresh", "champion"}}, // a new member taking an existing one
		{"champion", []string{"thief"}},               // the other direction
		{"second", []string{"new-alias", "champion"}}, // a merge after a harmless alias: all or nothing
	}
	for _, c := range cases {
		_, err := h.LinkIn(ctx, "t1", c.member, c.aliases, false, Reach{})
		if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), `"champion"`) && !strings.Contains(err.Error(), `"thief"`) {
			t.Fatalf("LinkIn(%s, %v) = %v, want ErrForbidden naming the alias", c.member, c.aliases, err)
		}
	}
	if got := top(t, h, Loc{Tenant: "t1", Board: "poker-final"}); !slices.Equal(got, before) {
		t.Fatalf("poker-final changed: %v, was %v", got, before)
	}
	for _, id := range []string{"fresh", "new-alias", "nobody-yet"} {
		if _, err := h.Identity("t1", id, Reach{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("Identity(%s) = %v: a refused link left a trace", id, err)
		}
	}
}

// TestLinkNoMergeAllowsNewAliases: aliases that name nobody, or the member
// already, link without merge rights, also through a member given by one
// of its aliases.
func TestLinkNoMergeAllowsNewAliases(t *testing.T) {
	h := startHub(t, Config{})
	ctx := testCtx(t)
	mustPut(t, h, "t1", "b", Settings{})
	mustSubmit(t, h, "t1", "b", Item{Member: "ann", Score: 5}, Item{Member: "bob", Score: 7})
	if _, err := h.LinkIn(ctx, "t1", "ann", []string{"dev1", "ann", "dev1"}, false, Reach{}); err != nil {
		t.Fatal(err)
	}
	// member given as an alias: stands for ann; dev1 is ann's already.
	id, err := h.LinkIn(ctx, "t1", "dev1", []string{"dev1", "ann", "dev2"}, false, Reach{})
	if err != nil || id.Member != "ann" || !slices.Equal(id.Aliases, []string{"dev1", "dev2"}) {
		t.Fatalf("LinkIn via alias = %+v, %v", id, err)
	}
	// member given as an alias, alias naming another member: a merge.
	if _, err := h.LinkIn(ctx, "t1", "dev2", []string{"bob"}, false, Reach{}); !errors.Is(err, ErrForbidden) {
		t.Fatalf("merge through member's alias = %v, want ErrForbidden", err)
	}
	if got := top(t, h, Loc{Tenant: "t1", Board: "b"}); !slices.Equal(got, []string{"bob:7", "ann:5"}) {
		t.Fatalf("board %v", got)
	}
	// With merge rights the same link merges.
	if _, err := h.LinkIn(ctx, "t1", "dev2", []string{"bob"}, true, Reach{}); err != nil {
		t.Fatal(err)
	}
	if got := top(t, h, Loc{Tenant: "t1", Board: "b"}); !slices.Equal(got, []string{"ann:7"}) {
		t.Fatalf("board after merge %v", got)
	}
}

// TestLinkNoMergeRacesSubmit: the merge check is made in stream order. A
// no-merge link racing the submission that creates its alias's member
// either links first (the submission then lands on the linker) or is
// refused; a restarted hub replaying the stream agrees with the live one.
func TestLinkNoMergeRacesSubmit(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, Config{DataDir: dir, SnapshotEvery: -1})
	ctx := testCtx(t)
	mustPut(t, h, "t1", "b", Settings{})
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, errs[i] = h.LinkIn(ctx, "t1", fmt.Sprintf("linker%d", i), []string{fmt.Sprintf("p%d", i)}, false, Reach{})
		}()
		go func() {
			defer wg.Done()
			_, _ = h.Submit(ctx, "t1", "b", []Item{{Member: fmt.Sprintf("p%d", i), Score: float64(i)}})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !errors.Is(err, ErrForbidden) {
			t.Fatalf("link %d: %v", i, err)
		}
	}
	live := top(t, h, Loc{Tenant: "t1", Board: "b"})
	if len(live) != 20 {
		t.Fatalf("board has %d rows, want 20 (no merge): %v", len(live), live)
	}
	h.Close()
	h2 := startHub(t, Config{DataDir: dir, SnapshotEvery: -1})
	if got := top(t, h2, Loc{Tenant: "t1", Board: "b"}); !slices.Equal(got, live) {
		t.Fatalf("replayed %v, live %v", got, live)
	}
}

// TestBoardLimitAtApply: creating one board past the limit fails with
// ErrLimit naming boards; updating an existing board passes; concurrent
// creates never exceed the limit.
func TestBoardLimitAtApply(t *testing.T) {
	h := startHub(t, Config{})
	ctx := testCtx(t)
	for i := range 3 {
		if _, err := h.PutBoardUpTo(ctx, "t1", fmt.Sprintf("b%d", i), Settings{}, 3); err != nil {
			t.Fatal(err)
		}
	}
	_, err := h.PutBoardUpTo(ctx, "t1", "b3", Settings{}, 3)
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "boards") {
		t.Fatalf("fourth board: %v, want ErrLimit naming boards", err)
	}
	if _, err := h.PutBoardUpTo(ctx, "t1", "b1", Settings{Policy: "sum"}, 3); err != nil {
		t.Fatalf("update at the limit: %v", err)
	}
	// Concurrent creates on a fresh tenant: the pre-check sees room for
	// all, apply lets exactly the limit through.
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, limited := 0, 0
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.PutBoardUpTo(ctx, "t2", fmt.Sprintf("c%d", i), Settings{}, 5)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, ErrLimit):
				limited++
			default:
				t.Errorf("create c%d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if n := len(h.Boards("t2")); ok != 5 || limited != 7 || n != 5 {
		t.Fatalf("ok %d, limited %d, boards %d; want 5, 7, 5", ok, limited, n)
	}
}

// TestBoardsPage: pages in name order, cursors past the end and between
// names, and the keep filter.
func TestBoardsPage(t *testing.T) {
	h := startHub(t, Config{})
	for _, b := range []string{"e", "a", "d", "b", "c"} {
		mustPut(t, h, "t1", b, Settings{})
	}
	names := func(infos []BoardInfo) string {
		var s []string
		for _, i := range infos {
			s = append(s, i.Name)
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		after string
		limit int
		want  string
		more  bool
	}{{"", 2, "a,b", true}, {"b", 2, "c,d", true}, {"d", 2, "e", false}, {"e", 2, "", false},
		{"bb", 10, "c,d,e", false}, {"", 5, "a,b,c,d,e", false}} {
		got, more := h.BoardsPage("t1", c.after, c.limit, nil)
		if names(got) != c.want || more != c.more {
			t.Errorf("after %q limit %d: %s %v, want %s %v", c.after, c.limit, names(got), more, c.want, c.more)
		}
	}
	got, more := h.BoardsPage("t1", "", 1, func(n string) bool { return n > "c" })
	if names(got) != "d" || !more {
		t.Errorf("filtered: %s %v", names(got), more)
	}
	if got, more := h.BoardsPage("nobody", "", 10, nil); got != nil || more {
		t.Errorf("unknown tenant: %v %v", got, more)
	}
}
