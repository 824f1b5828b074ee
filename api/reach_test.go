package api

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
)

// reachEnv is the scene of issue 21: poker-final ranks champion, slots-1
// ranks thief; both have profiles, champion an e-mail alias.
func reachEnv(t *testing.T) (*env, string) {
	e := newEnv(t, Config{})
	return e, reachScene(e)
}

func reachScene(e *env) string {
	admin := e.token("a", auth.RoleAdmin)
	e.must(200, "PUT", "/v1/boards/poker-final", admin, "")
	e.must(200, "PUT", "/v1/boards/slots-1", admin, "")
	e.must(200, "POST", "/v1/boards/poker-final/scores", admin, `{"member":"champion","score":1000}`)
	e.must(200, "POST", "/v1/boards/slots-1/scores", admin, `{"member":"thief","score":1}`)
	e.must(200, "PUT", "/v1/members/champion/profile", admin, `{"name":"Ada"}`)
	e.must(200, "PUT", "/v1/members/thief/profile", admin, `{"name":"Thief"}`)
	e.must(200, "POST", "/v1/identities", admin, `{"member":"champion","aliases":["ada@example.com"]}`)
	return admin
}

// TestProfileWriteNeedsEveryBoard: a slots-* submit token may not rename
// a member that ranks on poker-final (403 naming the board), nor add an
// alias to it; it may rename a member that ranks only on its boards.
func TestProfileWriteNeedsEveryBoard(t *testing.T) {
	e, admin := reachEnv(t)
	slots := e.token("a", auth.RoleSubmit, "slots-*")
	for _, c := range []struct{ method, path, body string }{
		{"PUT", "/v1/members/champion/profile", `{"name":"pwned"}`},
		{"PUT", "/v1/members/ada@example.com/profile", `{"name":"pwned"}`},
		{"POST", "/v1/identities", `{"member":"champion","aliases":["x-new"]}`},
	} {
		code, msg := errCode(e.must(403, c.method, c.path, slots, c.body))
		if code != "forbidden" || !strings.Contains(msg, `board "poker-final"`) {
			t.Errorf("%s %s: %s %q, want forbidden naming board \"poker-final\"", c.method, c.path, code, msg)
		}
	}
	if got := e.must(200, "GET", "/v1/members/champion/profile", admin, "")["name"]; got != "Ada" {
		t.Fatalf("champion's name %v after the refusals, want Ada", got)
	}
	e.must(200, "PUT", "/v1/members/thief/profile", slots, `{"name":"Renamed"}`)
	// champion joins slots-1 too: the slots token still reaches only one
	// of its boards.
	e.must(200, "POST", "/v1/boards/slots-1/scores", admin, `{"member":"champion","score":5}`)
	e.must(403, "PUT", "/v1/members/champion/profile", slots, `{"name":"pwned"}`)
	// A token reaching both boards by patterns may.
	both := e.token("a", auth.RoleSubmit, "slots-*", "poker-*")
	e.must(200, "PUT", "/v1/members/champion/profile", both, `{"name":"Ada L."}`)
}

// TestProfileReadNeedsOneBoard: a scoped read token reads the profile and
// identity of a member only where it ranks on one of the token's boards;
// otherwise 404 with the message a member that does not exist gets.
func TestProfileReadNeedsOneBoard(t *testing.T) {
	e, _ := reachEnv(t)
	slotsRead := e.token("a", auth.RoleRead, "slots-*")
	slotsSubmit := e.token("a", auth.RoleSubmit, "slots-*")
	for _, id := range []string{"champion", "ada@example.com"} {
		out := e.must(404, "GET", "/v1/members/"+id+"/profile", slotsRead, "")
		ghost := e.must(404, "GET", "/v1/members/ghost-"+id+"/profile", slotsRead, "")
		if _, m1 := errCode(out); m1 != strings.Replace(msgOf(ghost), "ghost-", "", 1) {
			t.Errorf("profile of %s: %q, unlike a member that does not exist (%q)", id, m1, msgOf(ghost))
		}
		out = e.must(404, "GET", "/v1/identities/"+id, slotsSubmit, "")
		ghost = e.must(404, "GET", "/v1/identities/ghost-"+id, slotsSubmit, "")
		if _, m1 := errCode(out); m1 != strings.Replace(msgOf(ghost), "ghost-", "", 1) {
			t.Errorf("identity of %s: %q, unlike an id that names nobody (%q)", id, m1, msgOf(ghost))
		}
	}
	if got := e.must(200, "GET", "/v1/members/thief/profile", slotsRead, "")["name"]; got != "Thief" {
		t.Fatalf("thief's profile through slots-*: %v", got)
	}
	e.must(200, "GET", "/v1/identities/thief", slotsSubmit, "")
	poker := e.token("a", auth.RoleRead, "poker-*")
	e.must(200, "GET", "/v1/members/ada@example.com/profile", poker, "")
}

func msgOf(out map[string]any) string { _, m := errCode(out); return m }

// TestTenantShowsReachedBoards: /v1/tenant counts and lists only the boards
// a scoped admin token reaches.
func TestTenantShowsReachedBoards(t *testing.T) {
	e, admin := reachEnv(t)
	for _, c := range []struct {
		token string
		want  float64
	}{
		{admin, 2},
		{e.token("a", auth.RoleAdmin, "slots-*"), 1},
		{e.token("a", auth.RoleAdmin, "none-*"), 0},
	} {
		out := e.must(200, "GET", "/v1/tenant", c.token, "")
		if out["boards"] != c.want {
			t.Errorf("boards %v, want %v", out["boards"], c.want)
		}
		subs, _ := out["subscriptions"].(map[string]any)
		for b := range subs {
			if c.want < 2 && !strings.HasPrefix(b, "slots-") {
				t.Errorf("subscriptions name %q", b)
			}
		}
	}
}

// TestTenantSubscriptionsFiltered: live subscriptions on a board outside a
// scoped token's reach are neither listed nor counted by /v1/tenant.
func TestTenantSubscriptionsFiltered(t *testing.T) {
	e := newLiveEnv(t, Config{})
	admin := reachScene(e.env)
	c := e.dial("access_token="+admin, true, nil)
	c.Subscribe("s1", "poker-final", map[string]any{"kind": "top", "limit": 10})
	checkFor(t, 5*time.Second, func() error {
		all := e.must(200, "GET", "/v1/tenant", admin, "")
		if fmt.Sprint(all["subscriptions"]) != "map[poker-final:1]" || all["connections"] != 1.0 {
			return fmt.Errorf("unscoped: %v", all)
		}
		return nil
	})
	slots := e.must(200, "GET", "/v1/tenant", e.token("a", auth.RoleAdmin, "slots-*"), "")
	if fmt.Sprint(slots["subscriptions"]) != "map[]" || slots["connections"] != 0.0 {
		t.Fatalf("slots-*: %v", slots)
	}
}

// TestFinalStandingsKeepNameAtEnd: a finished tournament's standings show
// the profile its winner had at the end, after a later rename (even by a
// token that may rename it); an open board shows the new name.
func TestFinalStandingsKeepNameAtEnd(t *testing.T) {
	e := newEnv(t, Config{})
	admin := e.token("a", auth.RoleAdmin)
	// The board gets its end only once the winner and the name are in:
	// a fixed end set first would race a loaded machine's requests.
	e.must(200, "PUT", "/v1/boards/poker-final", admin, `{"prizes":[{"from":1,"to":1,"prize":"€1,000"}]}`)
	e.must(200, "PUT", "/v1/boards/daily", admin, "")
	e.must(200, "POST", "/v1/boards/poker-final/scores", admin, `{"member":"champion","score":1000}`)
	e.must(200, "POST", "/v1/boards/daily/scores", admin, `{"member":"champion","score":1}`)
	e.must(200, "PUT", "/v1/members/champion/profile", admin, `{"name":"Ada"}`)
	ends := time.Now().Add(50 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	e.must(200, "PUT", "/v1/boards/poker-final", admin, `{"ends_at":"`+ends+`","prizes":[{"from":1,"to":1,"prize":"€1,000"}]}`)
	checkFor(t, 5*time.Second, func() error {
		if out := e.must(200, "GET", "/v1/boards/poker-final/standings", admin, ""); out["ended_at"] == nil {
			return fmt.Errorf("not ended yet: %v", out)
		}
		return nil
	})
	e.must(200, "PUT", "/v1/members/champion/profile", admin, `{"name":"Renamed"}`)
	rowName := func(path string) any {
		rows := e.must(200, "GET", path, admin, "")["rows"].([]any)
		return rows[0].(map[string]any)["name"]
	}
	if got := rowName("/v1/boards/poker-final/standings"); got != "Ada" {
		t.Fatalf("final standings show %v, want the name at the end, Ada", got)
	}
	if got := rowName("/v1/boards/daily/top"); got != "Renamed" {
		t.Fatalf("an open board shows %v, want Renamed", got)
	}
}
