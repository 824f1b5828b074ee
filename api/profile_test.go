package api

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/edgetest"
)

// TestProfilesAPI: PUT and GET a profile, rows carrying it in every read,
// the fields checked and named, the roles and tenants that may not.
func TestProfilesAPI(t *testing.T) {
	e := newEnv(t, Config{})
	tok := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/b", tok, `{"prizes":[{"from":1,"to":1,"prize":"€5"}]}`)
	e.must(200, "POST", "/v1/boards/b/scores", tok, `{"scores":[{"member":"p1","score":10},{"member":"p2","score":5}]}`)
	e.must(404, "GET", "/v1/members/p1/profile", tok, "")
	sub := e.token("a", auth.RoleSubmit)
	got := e.must(200, "PUT", "/v1/members/p1/profile", sub, `{"name":"GoldenAce","avatar":"https://cdn.example/a.png","country":"mt"}`)
	if got["name"] != "GoldenAce" || got["country"] != "MT" {
		t.Fatalf("put: %v", got)
	}
	if got := e.must(200, "GET", "/v1/members/p1/profile", e.token("a", auth.RoleRead), ""); got["avatar"] != "https://cdn.example/a.png" {
		t.Fatalf("get: %v", got)
	}
	for _, read := range []string{"/top", "/members/p1", "/members/p1/around?radius=1", "/ranks/1", "/members?ids=p1,p2", "/standings", "/scores?min=0"} {
		out := e.must(200, "GET", "/v1/boards/b"+read, tok, "")
		row := out
		if rows, ok := out["rows"].([]any); ok {
			row = rows[0].(map[string]any)
		}
		if row["member"] != "p1" || row["name"] != "GoldenAce" || row["country"] != "MT" {
			t.Errorf("%s: first row %v, want p1 with its profile", read, row)
		}
	}
	if rows := e.must(200, "GET", "/v1/boards/b/top", tok, "")["rows"].([]any); rows[1].(map[string]any)["name"] != nil {
		t.Errorf("a member without a profile shows one: %v", rows[1])
	}
	for _, tc := range []struct{ body, field string }{
		{`{}`, "name"},
		{`{"name":""}`, "name"},
		{`{"name":"` + strings.Repeat("x", 65) + `"}`, "name"},
		{`{"name":"a\u0000"}`, "name"},
		{`{"name":"a","avatar":"javascript:alert(1)"}`, "avatar"},
		{`{"name":"a","avatar":"http://cdn.example/a.png"}`, "avatar"},
		{`{"name":"a","country":"ZZ"}`, "country"},
		{`{"name":"a","email":"x@y"}`, "email"},
		{`{"name":1}`, "name"},
	} {
		status, out := e.do("PUT", "/v1/members/p1/profile", tok, tc.body)
		if code, msg := errCode(out); status != 400 || code == "" || !strings.Contains(msg, tc.field) {
			t.Errorf("PUT %s: %d %s %q, want 400 naming %s", tc.body, status, code, msg, tc.field)
		}
	}
	status, out := e.do("PUT", "/v1/members/bad%ff/profile", tok, `{"name":"a"}`)
	if code, msg := errCode(out); status != 400 || code == "" || !strings.HasPrefix(msg, "member") {
		t.Errorf("a bad member id: %d %s %q", status, code, msg)
	}
	// A read token may not set a profile; another tenant sees none and its
	// profile of the same id is its own.
	e.must(403, "PUT", "/v1/members/p1/profile", e.token("a", auth.RoleRead), `{"name":"Mallory"}`)
	other := e.token("b", admin)
	e.must(404, "GET", "/v1/members/p1/profile", other, "")
	e.must(200, "PUT", "/v1/boards/b", other, `{}`)
	e.must(200, "PUT", "/v1/members/p1/profile", other, `{"name":"Mallory"}`)
	if got := e.must(200, "GET", "/v1/members/p1/profile", tok, ""); got["name"] != "GoldenAce" {
		t.Fatalf("another tenant's write changed this one's profile: %v", got)
	}
}

// TestHistoryAPI: a member's own changes with their times, past windows'
// standings, the errors named; another tenant cannot read it.
func TestHistoryAPI(t *testing.T) {
	e := newEnv(t, Config{})
	tok := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/b", tok, `{"windows":["all","day"]}`)
	e.must(200, "POST", "/v1/boards/b/scores", tok, `{"scores":[{"member":"p1","score":10},{"member":"p2","score":20},{"member":"p1","score":30}]}`)
	out := e.must(200, "GET", "/v1/boards/b/members/p1/history", e.token("a", auth.RoleRead), "")
	pts := out["points"].([]any)
	first := pts[0].(map[string]any)
	if out["member"] != "p1" || len(pts) != 2 || first["score"] != 30.0 || first["rank"] != 1.0 || first["total"] != 2.0 ||
		!strings.HasSuffix(first["at"].(string), "Z") || first["window"] != nil {
		t.Fatalf("history: %v", out)
	}
	if out := e.must(200, "GET", "/v1/boards/b/members/p1/history?window=day", tok, ""); len(out["points"].([]any)) != 0 {
		t.Fatalf("no past day yet: %v", out)
	}
	for _, tc := range []struct{ query, field string }{
		{"window=month", "window"},
		{"window=year", "window"},
		{"at=2026-01-01", "at"},
	} {
		status, out := e.do("GET", "/v1/boards/b/members/p1/history?"+tc.query, tok, "")
		if code, msg := errCode(out); status != 400 || code == "" || !strings.HasPrefix(msg, tc.field) {
			t.Errorf("?%s: %d %s %q, want 400 naming %s", tc.query, status, code, msg, tc.field)
		}
	}
	e.must(404, "GET", "/v1/boards/b/members/nobody/history", tok, "")
	e.must(404, "GET", "/v1/boards/b/members/p1/history", e.token("b", admin), "")
	e.must(403, "GET", "/v1/boards/b/members/p1/history", e.token("a", auth.RoleSubmit), "")
}

// TestWSBoardMessage: a subscription to a tournament board first gets its
// times and prizes, then its snapshot, whose rows carry profiles and the
// review marker; a plain board sends no board message.
func TestWSBoardMessage(t *testing.T) {
	e := newLiveEnv(t, Config{})
	adm := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/cup", adm, `{"ends_at":"2099-01-01T00:00:00Z","prizes":[{"from":1,"to":1,"prize":"€5"}],"rules":{"max_score":100}}`)
	e.must(200, "PUT", "/v1/boards/plain", adm, `{}`)
	for _, b := range []string{"cup", "plain"} {
		e.must(200, "POST", "/v1/boards/"+b+"/scores", adm, `{"scores":[{"member":"p1","score":10},{"member":"p2","score":20},{"member":"p2","score":500}]}`)
	}
	e.must(200, "PUT", "/v1/members/p1/profile", adm, `{"name":"Ace","avatar":"https://cdn.example/a.png"}`)
	c := e.dial("access_token="+e.tokenFor("a", auth.RoleRead, "p1", time.Now().Add(time.Hour)), true, nil)
	c.Subscribe("s1", "cup", map[string]any{"kind": "top", "limit": 10})
	c.Subscribe("s2", "plain", map[string]any{"kind": "top", "limit": 10})
	checkFor(t, 5*time.Second, func() error {
		rows, ok := c.Rows("s2")
		if _, ok1 := c.Rows("s1"); !ok || !ok1 || len(rows) != 2 {
			return fmt.Errorf("no snapshots yet")
		}
		return nil
	})
	msgs := c.Messages()
	if m := msgs[0]; m.Type != "board" || *m.ID != "s1" || m.Board != "cup" || m.EndsAt != "2099-01-01T00:00:00.000Z" ||
		len(m.Prizes) != 1 || m.Prizes[0].Prize != "€5" {
		t.Fatalf("first message %+v, want the board message of s1", m)
	}
	for _, m := range msgs[1:] {
		if m.Type == "board" {
			t.Fatalf("a second board message: %+v", m)
		}
	}
	// A token that does not reach the board learns nothing of it.
	narrow := e.dial("access_token="+e.tokenForBoards("a", "p1", "plain"), true, nil)
	narrow.Subscribe("n1", "cup", map[string]any{"kind": "top"})
	checkFor(t, 5*time.Second, func() error {
		if len(narrow.Errors()) == 0 {
			return fmt.Errorf("no error yet")
		}
		return nil
	})
	for _, m := range narrow.Messages() {
		if m.Type != "error" || m.Code != "forbidden" {
			t.Fatalf("a token without the board got %+v", m)
		}
	}
	rows, _ := c.Rows("s1")
	if rows[1].Member != "p2" || !rows[1].Review || rows[2].Name != "Ace" || rows[2].Avatar != "https://cdn.example/a.png" || rows[2].Review {
		t.Fatalf("rows %+v: want p2 under review, p1 with its profile", rows)
	}
}

// TestTenantPanel: GET /v1/tenant shows an admin the limits in force and
// the live use on this gateway; other roles are refused.
func TestTenantPanel(t *testing.T) {
	e := newLiveEnv(t, Config{})
	adm := e.token("b", admin)
	e.must(200, "PUT", "/v1/boards/x", adm, `{}`)
	c := e.dial("access_token="+e.tokenFor("b", auth.RoleRead, "p1", time.Now().Add(time.Hour)), true, nil)
	c.Subscribe("s1", "x", map[string]any{"kind": "top"})
	c.Subscribe("s2", "x", map[string]any{"kind": "rank", "rank": 1})
	checkFor(t, 5*time.Second, func() error {
		got := e.must(200, "GET", "/v1/tenant", adm, "")
		subs, _ := got["subscriptions"].(map[string]any)
		lim, _ := got["limits"].(map[string]any)
		if got["tenant"] != "casino-b" || got["boards"] != 1.0 || got["connections"] != 1.0 || subs["x"] != 2.0 || lim["connections"] != 2.0 {
			return fmt.Errorf("tenant panel %v", got)
		}
		return nil
	})
	e.must(403, "GET", "/v1/tenant", e.token("b", auth.RoleRead|auth.RoleSubmit), "")
	if got := e.must(200, "GET", "/v1/tenant", e.token("a", admin), ""); got["tenant"] != "casino-a" || got["connections"] != 0.0 {
		t.Fatalf("another tenant's panel: %v", got)
	}
}

// tokenForBoards mints a read token of tenant limited to board patterns.
func (e *liveEnv) tokenForBoards(tenant, sub string, boards ...string) string {
	e.t.Helper()
	return edgetest.Mint(e.t, e.keys, tenant, auth.Claims{Subject: sub, Roles: auth.RoleRead, Boards: boards, Expiry: time.Now().Add(time.Hour)})
}
