package api

import (
	"strings"
	"testing"

	"github.com/rankwire/rankwire/auth"
)

// Tournament settings over HTTP: a board that ended refuses submissions
// with 409 naming ends_at and answers final standings; an open one ranks
// with prizes; bad settings answer 400 naming the field; standings need a
// token that reaches the board.
func TestStandingsOverHTTP(t *testing.T) {
	e := newEnv(t, Config{})
	admin := e.token("a", auth.RoleAdmin|auth.RoleSubmit|auth.RoleRead)
	e.must(200, "PUT", "/v1/boards/past", admin, `{"starts_at":"2026-01-01T00:00:00Z","ends_at":"2026-01-02T00:00:00Z","prizes":[{"from":1,"to":3,"prize":"€100"}]}`)
	out := e.must(409, "POST", "/v1/boards/past/scores", admin, `{"member":"p1","score":5}`)
	if code, msg := errCode(out); code != "conflict" || !strings.HasPrefix(msg, "ends_at: ") {
		t.Fatalf("a submission after the end: %s %q", code, msg)
	}
	out = e.must(200, "GET", "/v1/boards/past/standings", admin, "")
	if out["final"] != true || out["ended_at"] != "2026-01-02T00:00:00.000Z" || out["total"].(float64) != 0 {
		t.Fatalf("standings of an ended board: %v", out)
	}

	board := e.must(200, "PUT", "/v1/boards/live", admin, `{"ends_at":"2999-01-01T00:00:00Z","prizes":[{"from":2,"to":2,"prize":"€5"},{"from":1,"to":1,"prize":"€50"}]}`)
	if board["ends_at"] != "2999-01-01T00:00:00.000Z" || len(board["prizes"].([]any)) != 2 {
		t.Fatalf("board settings: %v", board)
	}
	e.must(200, "POST", "/v1/boards/live/scores", admin, `{"scores":[{"member":"p1","score":5},{"member":"p2","score":9},{"member":"p3","score":1}]}`)
	out = e.must(200, "GET", "/v1/boards/live/standings?limit=10", admin, "")
	rows := out["rows"].([]any)
	if out["final"] != false || out["ended_at"] != nil || len(rows) != 3 {
		t.Fatalf("standings while open: %v", out)
	}
	for i, want := range []string{"€50", "€5", ""} {
		got, _ := rows[i].(map[string]any)["prize"].(string)
		if got != want {
			t.Errorf("rank %d prize %q, want %q", i+1, got, want)
		}
	}

	out = e.must(400, "PUT", "/v1/boards/bad", admin, `{"ends_at":"soon"}`)
	if code, msg := errCode(out); code != "bad_request" || !strings.HasPrefix(msg, "ends_at: ") {
		t.Fatalf("bad ends_at: %s %q", code, msg)
	}
	out = e.must(400, "PUT", "/v1/boards/bad", admin, `{"prizes":[{"from":1,"to":2,"prize":"a"},{"from":2,"to":3,"prize":"b"}]}`)
	if _, msg := errCode(out); !strings.HasPrefix(msg, "prizes: ranks 2..3 overlap") {
		t.Fatalf("overlapping prizes: %q", msg)
	}
	e.must(403, "GET", "/v1/boards/live/standings", e.token("a", auth.RoleRead, "other-*"), "")
	e.must(400, "GET", "/v1/boards/live/standings?limit=0", admin, "")
}
