package api

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/edgetest"
)

// newEnvLimits is newEnv with casino-b's limits object (without braces).
func newEnvLimits(t *testing.T, cfg Config, bLimits string) *env {
	t.Helper()
	keys, h := startTestHub(t, bLimits, hub.Config{})
	cfg.Hub, cfg.Verifier, cfg.Keys = h, auth.NewVerifier(keys, auth.Options{}), keys
	srv := httptest.NewServer(New(cfg))
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, keys: keys, hub: h}
}

// TestLinkCannotMergeOutsideScope is the attack of issue 10: a submit token
// limited to slots-* may not reach poker-final through an identity link.
// Merges need role admin with every board; new aliases need submit.
func TestLinkCannotMergeOutsideScope(t *testing.T) {
	e := newEnv(t, Config{})
	admin := e.token("a", auth.RoleAdmin)
	e.must(200, "PUT", "/v1/boards/poker-final", admin, "")
	e.must(200, "PUT", "/v1/boards/slots-1", admin, "")
	e.must(200, "POST", "/v1/boards/poker-final/scores", admin, `{"member":"champion","score":1000}`)
	e.must(200, "POST", "/v1/boards/poker-final/scores", admin, `{"member":"runner-up","score":10}`)
	e.must(200, "POST", "/v1/boards/slots-1/scores", admin, `{"member":"thief","score":1}`)
	before := members(e.must(200, "GET", "/v1/boards/poker-final/top", admin, ""))

	slots := e.token("a", auth.RoleSubmit, "slots-*")
	e.must(403, "POST", "/v1/boards/poker-final/scores", slots, `{"member":"thief","score":1e15}`)
	for _, c := range []struct {
		name, token, body, alias string
	}{
		{"submit slots-* (the issue)", slots, `{"member":"thief","aliases":["champion"]}`, "champion"},
		{"submit slots-*, other way", slots, `{"member":"champion","aliases":["thief"]}`, "thief"},
		{"submit slots-*, new member", slots, `{"member":"newcomer","aliases":["champion"]}`, "champion"},
		{"submit unrestricted", e.token("a", auth.RoleSubmit), `{"member":"thief","aliases":["champion"]}`, "champion"},
		{"admin boards []", e.token("a", auth.RoleAdmin, []string{}...), `{"member":"thief","aliases":["champion"]}`, "champion"},
		{"admin poker-*", e.token("a", auth.RoleAdmin, "poker-*", "slots-*"), `{"member":"thief","aliases":["champion"]}`, "champion"},
		{"admin slots-*, merge after a new alias", e.token("a", auth.RoleAdmin, "slots-*"), `{"member":"runner-up","aliases":["x1","thief"]}`, "thief"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := e.must(403, "POST", "/v1/identities", c.token, c.body)
			code, msg := errCode(out)
			if code != "forbidden" || !strings.Contains(msg, `"`+c.alias+`"`) || strings.Contains(msg, "hub") {
				t.Fatalf("%s %q, want forbidden naming %q", code, msg, c.alias)
			}
		})
	}
	if got := members(e.must(200, "GET", "/v1/boards/poker-final/top", admin, "")); !slices.Equal(got, before) {
		t.Fatalf("poker-final changed: %v, was %v", got, before)
	}
	e.must(404, "GET", "/v1/identities/x1", admin, "")

	// New aliases, and aliases of the member already, need only submit.
	e.must(200, "POST", "/v1/identities", slots, `{"member":"thief","aliases":["email:t@x.io"]}`)
	e.must(200, "POST", "/v1/identities", slots, `{"member":"email:t@x.io","aliases":["thief","dev9"]}`)
	// member given by an alias stands for its owner: a merge all the same.
	code, msg := errCode(e.must(403, "POST", "/v1/identities", slots, `{"member":"dev9","aliases":["champion"]}`))
	if code != "forbidden" || !strings.Contains(msg, `"champion"`) {
		t.Fatalf("merge through an alias: %s %q", code, msg)
	}
	if got := members(e.must(200, "GET", "/v1/boards/poker-final/top", admin, "")); !slices.Equal(got, before) {
		t.Fatalf("poker-final changed: %v, was %v", got, before)
	}

	// An admin that reaches every board merges: no claim, or "*".
	for i, tok := range []string{e.token("a", auth.RoleAdmin, "*"), admin} {
		into, from := fmt.Sprintf("m%d", 2*i), fmt.Sprintf("m%d", 2*i+1)
		e.must(200, "POST", "/v1/boards/poker-final/scores", admin, `{"member":"`+into+`","score":5}`)
		e.must(200, "POST", "/v1/boards/poker-final/scores", admin, `{"member":"`+from+`","score":6}`)
		id := e.must(200, "POST", "/v1/identities", tok, `{"member":"`+into+`","aliases":["`+from+`"]}`)
		if id["member"] != into {
			t.Fatalf("merge: %v", id)
		}
		row := e.must(200, "GET", "/v1/boards/poker-final/members/"+from, admin, "")
		if row["member"] != into || row["score"] != 6.0 {
			t.Fatalf("after the merge %s reads as %v", from, row)
		}
	}
}

// TestBoardLimit: the key file's limits.boards; one past it is
// rate_limited naming boards; updates at the limit pass; deleting frees a place.
func TestBoardLimit(t *testing.T) {
	e := newEnvLimits(t, Config{}, `"boards":3`)
	admin := e.token("b", auth.RoleAdmin)
	for i := range 3 {
		e.must(200, "PUT", fmt.Sprintf("/v1/boards/b%d", i), admin, "")
	}
	code, msg := errCode(e.must(429, "PUT", "/v1/boards/b3", admin, ""))
	if code != "rate_limited" || !strings.HasPrefix(msg, "boards:") {
		t.Fatalf("%s %q, want rate_limited naming boards", code, msg)
	}
	e.must(200, "PUT", "/v1/boards/b1", admin, `{"policy":"sum"}`)
	e.must(200, "DELETE", "/v1/boards/b0", admin, "")
	e.must(200, "PUT", "/v1/boards/b3", admin, "")
	e.must(429, "PUT", "/v1/boards/b4", admin, "")
	// casino-a has no limits: the default applies, far away.
	e.must(200, "PUT", "/v1/boards/b9", e.token("a", auth.RoleAdmin), "")
}

// TestBoardLimitInKeyFile: limits.boards is validated.
func TestBoardLimitInKeyFile(t *testing.T) {
	for _, lim := range []string{`-1`, `1000001`, `1.5`, `"3"`} {
		_, err := auth.ParseKeys([]byte(fmt.Sprintf(`{"tenants":{"t":{"keys":[{"kid":"k","alg":"HS256","secret":%q}],"limits":{"boards":%s}}}}`,
			edgetest.Secret('k'), lim)))
		if err == nil || !strings.Contains(err.Error(), "boards") {
			t.Errorf("boards %s: %v, want an error naming boards", lim, err)
		}
	}
	keys, err := auth.ParseKeys([]byte(fmt.Sprintf(`{"tenants":{"t":{"keys":[{"kid":"k","alg":"HS256","secret":%q}]}}}`, edgetest.Secret('k'))))
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := keys.Limits("t"); l.BoardLimit() != auth.DefaultBoards {
		t.Fatalf("default board limit %d", l.BoardLimit())
	}
}

// TestListBoardsPaging: pages in name order with next while more follow,
// filtered by the token's patterns, and bad limits and cursors refused.
func TestListBoardsPaging(t *testing.T) {
	e := newEnv(t, Config{})
	admin := e.token("a", auth.RoleAdmin)
	var all []string
	for i := range 25 {
		name := fmt.Sprintf("slots-%02d", i)
		all = append(all, name)
		e.must(200, "PUT", "/v1/boards/"+name, admin, "")
		e.must(200, "PUT", fmt.Sprintf("/v1/boards/poker-%02d", i), admin, "")
	}
	reader := e.token("a", auth.RoleRead, "slots-*")
	var got []string
	path, pages := "/v1/boards?limit=10", 0
	for pages < 10 {
		out := e.must(200, "GET", path, reader, "")
		pages++
		for _, b := range out["boards"].([]any) {
			got = append(got, b.(map[string]any)["name"].(string))
		}
		next, ok := out["next"].(string)
		if !ok {
			break
		}
		path = "/v1/boards?limit=10&after=" + url.QueryEscape(next)
	}
	if pages != 3 || !slices.Equal(got, all) {
		t.Fatalf("%d pages: %v", pages, got)
	}
	if out := e.must(200, "GET", "/v1/boards", admin, ""); len(out["boards"].([]any)) != 50 || out["next"] != nil {
		t.Fatalf("default page: %d boards, next %v", len(out["boards"].([]any)), out["next"])
	}
	if out := e.must(200, "GET", "/v1/boards?after=zzz", admin, ""); len(out["boards"].([]any)) != 0 {
		t.Fatalf("after the last: %v", out)
	}
	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "limit=-1", "after=Bad", "after=a.b", "after=%2A",
		"after=" + strings.Repeat("a", 65), "after=%ff"} {
		code, msg := errCode(e.must(400, "GET", "/v1/boards?"+q, admin, ""))
		field, _, _ := strings.Cut(q, "=")
		if code != "bad_request" || !strings.HasPrefix(msg, field+":") {
			t.Errorf("%s: %s %q", q, code, msg)
		}
	}
}
