package api

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/auth"
)

// scoresBody is a submission body of members m<from>..m<to-1>, each
// scoring score(i).
func scoresBody(from, to int, score func(i int) float64) string {
	var b strings.Builder
	b.WriteString(`{"scores":[`)
	for i := from; i < to; i++ {
		if i > from {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"member":"m%d","score":%v}`, i, score(i))
	}
	b.WriteString(`]}`)
	return b.String()
}

func TestScoreRanges(t *testing.T) {
	e := newEnv(t, Config{})
	tok := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/desc", tok, `{}`)
	e.must(200, "PUT", "/v1/boards/asc", tok, `{"order":"asc"}`)
	for _, b := range []string{"desc", "asc"} {
		// m0..m99 score 0, 100, ..., 9900; m100..m104 tie at 5000.
		e.must(200, "POST", "/v1/boards/"+b+"/scores", tok, scoresBody(0, 100, func(i int) float64 { return float64(i * 100) }))
		e.must(200, "POST", "/v1/boards/"+b+"/scores", tok, scoresBody(100, 105, func(int) float64 { return 5000 }))
	}
	for _, tc := range []struct {
		board, query string
		count        float64
		first, last  string // the first page's first and last rows
		pages        int
	}{
		{"desc", "min=8000&max=10000&limit=100", 20, "m99", "m80", 1},
		{"desc", "min=4950&max=5050&limit=2", 6, "m50", "m100", 3}, // m50 (5000, earliest) and the ties
		{"desc", "min=5001&max=5099", 0, "", "", 1},
		{"desc", "min=-1e9", 105, "m99", "m90", 11}, // no max: everything, 10 a page
		{"asc", "min=8000&max=10000&limit=100", 20, "m80", "m99", 1},
		{"asc", "max=250&limit=2", 3, "m0", "m1", 2},
		{"asc", "min=9900&max=9900", 1, "m99", "m99", 1},
	} {
		q := "/v1/boards/" + tc.board + "/scores?" + tc.query
		page := e.must(200, "GET", q, tok, "")
		if page["count"] != tc.count || page["total"] != 105.0 {
			t.Errorf("%s ?%s: count %v total %v, want %v of 105", tc.board, tc.query, page["count"], page["total"], tc.count)
		}
		got := members(page)
		if tc.first == "" {
			if len(got) != 0 || page["next"] != nil {
				t.Errorf("%s ?%s: %v, want no rows and no next", tc.board, tc.query, page)
			}
			continue
		}
		if len(got) == 0 || got[0] != tc.first || got[len(got)-1] != tc.last {
			t.Errorf("%s ?%s: rows %v, want %s..%s", tc.board, tc.query, got, tc.first, tc.last)
		}
		// Following next reads the whole range once, in rank order.
		seen, pages := len(got), 1
		for page["next"] != nil {
			page = e.must(200, "GET", q+"&after="+url.QueryEscape(page["next"].(string)), tok, "")
			seen += len(members(page))
			pages++
			if page["count"] != tc.count {
				t.Errorf("%s ?%s: page %d count %v", tc.board, tc.query, pages, page["count"])
			}
		}
		if float64(seen) != tc.count || pages != tc.pages {
			t.Errorf("%s ?%s: %d rows in %d pages, want %v in %d", tc.board, tc.query, seen, pages, tc.count, tc.pages)
		}
	}
	for _, tc := range []struct{ query, field string }{
		{"min=abc", "min"},
		{"max=NaN", "max"},
		{"min=Inf", "min"},
		{"min=10&max=5", "min"},
		{"limit=0", "limit"},
		{"limit=1001", "limit"},
		{"after=xyz", "after"},
		{"after=" + strings.Repeat("A", 39), "after"},
	} {
		status, out := e.do("GET", "/v1/boards/desc/scores?"+tc.query, tok, "")
		if code, msg := errCode(out); status != 400 || code == "" || !strings.Contains(msg, tc.field) {
			t.Errorf("?%s: %d %s %q, want 400 naming %s", tc.query, status, code, msg, tc.field)
		}
	}
	e.must(200, "PUT", "/v1/boards/empty", tok, `{}`)
	if got := e.must(200, "GET", "/v1/boards/empty/scores?min=0", tok, ""); got["count"] != 0.0 || len(members(got)) != 0 {
		t.Errorf("an empty board: %v", got)
	}
	e.must(404, "GET", "/v1/boards/nope/scores", tok, "")
	e.must(403, "GET", "/v1/boards/desc/scores", e.token("a", auth.RoleSubmit), "") // no read role
	e.must(404, "GET", "/v1/boards/desc/scores", e.token("b", admin), "")           // another tenant
}

// TestTopCursorPages pages through a board with after while other members
// move above the cursor between pages: every member that did not move is
// read exactly once, in rank order, where offsets would skip or repeat rows.
func TestTopCursorPages(t *testing.T) {
	e := newEnv(t, Config{})
	tok := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/b", tok, `{"policy":"latest"}`)
	const n = 200
	e.must(200, "POST", "/v1/boards/b/scores", tok, scoresBody(0, n, func(i int) float64 { return float64(i) }))
	rng := rand.New(rand.NewPCG(1, 2))
	moved := map[string]bool{}
	var read []string
	page := e.must(200, "GET", "/v1/boards/b/top?limit=15", tok, "")
	for round := 0; ; round++ {
		got := members(page)
		read = append(read, got...)
		if page["next"] == nil {
			break
		}
		// Move members the reader has already passed: up, down (not below
		// the cursor) or to the top, and add new ones at the top.
		var moves []string
		for range 5 {
			m := read[rng.IntN(len(read))]
			moved[m] = true
			moves = append(moves, fmt.Sprintf(`{"member":%q,"score":%d}`, m, 1000+rng.IntN(1000)))
		}
		moves = append(moves, fmt.Sprintf(`{"member":"new%d","score":5000}`, round))
		e.must(200, "POST", "/v1/boards/b/scores", tok, `{"scores":[`+strings.Join(moves, ",")+`]}`)
		if round == 3 {
			e.must(200, "DELETE", "/v1/boards/b/members/"+read[len(read)-1], tok, "") // the cursor's own entry goes
			moved[read[len(read)-1]] = true
		}
		page = e.must(200, "GET", "/v1/boards/b/top?limit=15&after="+url.QueryEscape(page["next"].(string)), tok, "")
	}
	count := map[string]int{}
	for _, m := range read {
		count[m]++
	}
	for i := range n {
		m := fmt.Sprintf("m%d", i)
		if !moved[m] && count[m] != 1 {
			t.Errorf("%s, never moved, read %d times", m, count[m])
		}
	}
	// Unmoved members came in rank order: descending by their index.
	last := n
	for _, m := range read {
		var i int
		if _, err := fmt.Sscanf(m, "m%d", &i); err != nil || moved[m] {
			continue
		}
		if i >= last {
			t.Fatalf("m%d read after m%d", i, last)
		}
		last = i
	}

	for _, tc := range []struct{ query, field string }{
		{"after=abc", "after"},
		{"offset=5&after=" + url.QueryEscape(e.must(200, "GET", "/v1/boards/b/top?limit=1", tok, "")["next"].(string)), "after"},
	} {
		status, out := e.do("GET", "/v1/boards/b/top?"+tc.query, tok, "")
		if code, msg := errCode(out); status != 400 || code == "" || !strings.Contains(msg, tc.field) {
			t.Errorf("?%s: %d %s %q, want 400 naming %s", tc.query, status, code, msg, tc.field)
		}
	}
	total := int(e.must(200, "GET", "/v1/boards/b/top?limit=1", tok, "")["total"].(float64))
	if p := e.must(200, "GET", fmt.Sprintf("/v1/boards/b/top?offset=%d&limit=10", total-10), tok, ""); p["next"] != nil || len(members(p)) != 10 {
		t.Errorf("the last page carries next: %v", p["next"])
	}
}
