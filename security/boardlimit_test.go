package security

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestBoardLimitStaysWithItsTenant: tenant C, limited to boardsC boards,
// creates ten at once: exactly as many as its limit leaves are created,
// the rest answer 429 rate_limited naming boards, and updating a board it
// has still works. Tenants A and B create boards as usual meanwhile, and
// C's board list, paged, holds its own boards only.
func TestBoardLimitStaysWithItsTenant(t *testing.T) {
	adminC := hs(t, "c1", gw.secretC, base(tenantC, "admin"))
	before := len(listBoards(t, adminC))
	t.Cleanup(func() {
		for i := range 10 {
			do(t, "DELETE", fmt.Sprintf("/v1/boards/c-lim-%d", i), adminC, "")
		}
	})
	var wg sync.WaitGroup
	replies := make([]reply, 10)
	for i := range replies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = do(t, "PUT", fmt.Sprintf("/v1/boards/c-lim-%d", i), adminC, `{}`)
		}()
	}
	wg.Wait()
	created := 0
	for i, r := range replies {
		switch r.status {
		case 200:
			created++
		case 429:
			if code, msg := protocolError(t, "board past the limit", r); code != "rate_limited" || !strings.Contains(msg, "boards") {
				t.Errorf("c-lim-%d past the limit: %s %q, want rate_limited naming boards", i, code, msg)
			}
		default:
			t.Errorf("c-lim-%d: %d %s, want 200 or 429", i, r.status, r.body)
		}
	}
	if want := boardsC - before; created != want {
		t.Errorf("ten concurrent creates with %d of %d boards taken: %d created, want %d", before, boardsC, created, want)
	}
	if names := listBoards(t, adminC); len(names) != boardsC {
		t.Errorf("tenant C lists %d boards, want %d: %v", len(names), boardsC, names)
	} else {
		noLeak(t, "tenant C's board list", strings.Join(names, ","))
		mustOK(t, "PUT", "/v1/boards/"+names[0], adminC, `{"retention":4}`)
	}
	mustOK(t, "PUT", "/v1/boards/a-while-c-is-full", tokA(t, base(tenantA, "admin")), `{}`)
	mustOK(t, "DELETE", "/v1/boards/a-while-c-is-full", tokA(t, base(tenantA, "admin")), "")
	mustOK(t, "PUT", "/v1/boards/b-while-c-is-full", tokB(t, base(tenantB, "admin")), `{}`)
	mustOK(t, "DELETE", "/v1/boards/b-while-c-is-full", tokB(t, base(tenantB, "admin")), "")
}

// listBoards pages through GET /v1/boards two at a time and returns the
// names, failing t on a page that does not advance.
func listBoards(t *testing.T, token string) []string {
	t.Helper()
	var names []string
	after := ""
	for range 100 {
		var page struct {
			Boards []struct{ Name string } `json:"boards"`
			Next   string                  `json:"next"`
		}
		r := mustOK(t, "GET", "/v1/boards?limit=2&after="+after, token, "")
		if err := json.Unmarshal([]byte(r.body), &page); err != nil {
			t.Fatalf("board list: %v: %s", err, r.body)
		}
		for _, b := range page.Boards {
			names = append(names, b.Name)
		}
		if page.Next == "" {
			return names
		}
		if page.Next == after {
			t.Fatalf("board list: next %q repeats", after)
		}
		after = page.Next
	}
	t.Fatal("board list: more than 100 pages")
	return nil
}
