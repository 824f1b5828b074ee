package security

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRoleEscapes: a valid token of tenant A may do only what its roles
// and board patterns allow: every step past them is 403 forbidden and
// changes nothing.
func TestRoleEscapes(t *testing.T) {
	read := tokA(t, base(tenantA, "read"))
	submit := tokA(t, base(tenantA, "submit"))
	slotsSubmit := tokA(t, base(tenantA, "submit").with("boards", []string{"slots-*"}))
	slotsRead := tokA(t, base(tenantA, "read").with("boards", []string{"slots-*"}))
	slotsAdmin := tokA(t, base(tenantA, "admin").with("boards", []string{"slots-*"}))
	cases := []struct{ name, token, method, path, body string }{
		{"read token submits", read, "POST", "/v1/boards/poker-final/scores", `{"member":"forger","score":1e15}`},
		{"read token creates a board", read, "PUT", "/v1/boards/forged-board", `{}`},
		{"read token links identities", read, "POST", "/v1/identities", `{"member":"forger","aliases":["x:1"]}`},
		{"submit token creates a board", submit, "PUT", "/v1/boards/forged-board", `{}`},
		{"submit token changes a board", submit, "PUT", "/v1/boards/poker-final", `{"order":"asc"}`},
		{"submit token deletes a board", submit, "DELETE", "/v1/boards/poker-final", ""},
		{"submit token resets a board", submit, "POST", "/v1/boards/poker-final/reset", ""},
		{"submit token removes a member", submit, "DELETE", "/v1/boards/poker-final/members/champion", ""},
		{"slots submit token submits to poker-final", slotsSubmit, "POST", "/v1/boards/poker-final/scores", `{"member":"forger","score":1e15}`},
		{"slots read token reads poker-final", slotsRead, "GET", "/v1/boards/poker-final/top", ""},
		{"slots read token reads a member of poker-final", slotsRead, "GET", "/v1/boards/poker-final/members/champion", ""},
		{"slots read token reads poker-final's settings", slotsRead, "GET", "/v1/boards/poker-final", ""},
		{"slots admin token deletes poker-final", slotsAdmin, "DELETE", "/v1/boards/poker-final", ""},
		{"slots admin token resets poker-final", slotsAdmin, "POST", "/v1/boards/poker-final/reset", ""},
		{"slots admin token creates poker-x", slotsAdmin, "PUT", "/v1/boards/forged-board", `{}`},
	}
	for _, c := range cases {
		r := do(t, c.method, c.path, c.token, c.body)
		if r.status != 403 {
			t.Errorf("%s: %d %.200s, want 403", c.name, r.status, r.body)
		}
		protocolError(t, c.name, r)
		if strings.Contains(r.body, "champion") || strings.Contains(r.body, "1000000") {
			t.Errorf("%s: refusal shows poker-final's data: %s", c.name, r.body)
		}
	}
	assertUntouched(t)
}

// TestBoardPatternEscapesInURL: a token limited to slots-* cannot reach
// poker-final through encoded slashes, dot segments, glob characters or
// NUL bytes in the board's path segment. Whatever the status, no answer
// is 5xx or carries poker-final's rows.
func TestBoardPatternEscapesInURL(t *testing.T) {
	slotsRead := tokA(t, base(tenantA, "read").with("boards", []string{"slots-*"}))
	slotsSubmit := tokA(t, base(tenantA, "submit").with("boards", []string{"slots-*"}))
	paths := []string{
		"/v1/boards/slots-1%2F..%2Fpoker-final/top",
		"/v1/boards/slots-1%2f..%2fpoker-final/top",
		"/v1/boards/slots-..%2Fpoker-final/top",
		"/v1/boards/slots-1/../poker-final/top",
		"/v1/boards/slots-1/..%2Fpoker-final/top",
		"/v1/boards/slots-%2A/top",
		"/v1/boards/slots-*/top",
		"/v1/boards/slots-%00poker-final/top",
		"/v1/boards/slots-1%2Fpoker-final/top",
		"/v1/boards/slots-1%5C..%5Cpoker-final/top",
		"/v1/boards/slots-1.poker-final/top",
		"/v1/boards/slots-1>/top",
		"/v1/boards/%73lots-1/../../boards/poker-final/top",
		"/v1/boards/slots-1/members/champion/../../../poker-final/top",
		"/v1/boards/slots-1?board=poker-final",
		"/v1/boards/SLOTS-1/../poker-final/top",
		"/v1/boards/slots-%E2%80%8Bpoker-final/top",
	}
	for _, p := range paths {
		for _, tok := range []string{slotsRead, slotsSubmit} {
			r := do(t, "GET", p, tok, "")
			if r.status >= 500 || r.status == 200 && strings.Contains(r.body, "champion") || strings.Contains(r.body, "runner-up") {
				t.Errorf("GET %s: %d %.300s", p, r.status, r.body)
			}
			noLeak(t, p, r.body)
		}
		r := do(t, "POST", strings.Replace(p, "/top", "/scores", 1), slotsSubmit, `{"member":"forger","score":1e15}`)
		if r.status >= 500 || r.status == 200 && !strings.Contains(r.body, `"rank"`) {
			t.Errorf("POST %s: %d %.300s", p, r.status, r.body)
		}
	}
	assertUntouched(t)
	if body := mustOK(t, "GET", "/v1/boards/slots-1/top", slotsRead, "").body; strings.Contains(body, "champion") {
		t.Errorf("slots-1 holds poker-final's member: %s", body)
	}
}

// probes are tenant B's names that tenant A's requests carry, each with a
// ghost: a name no tenant has. An answer to a probe must equal the answer
// to its ghost, names aside: the gateway tells A nothing about whether B's
// names exist.
var probes = [][2]string{
	{"zebra-vault", "ghost-vault"},
	{"zq-whale-9931", "gh-whale-0000"},
	{"email:zq@b.example", "email:gh@b.example"},
	{"champion-b", "ghost-b"},
}

// ghostOf returns s with each probe replaced by its ghost.
func ghostOf(s string) string {
	for _, p := range probes {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	return s
}

// scrub replaces the probes and ghosts in s, which a request itself
// carried, by one placeholder: what is left is what the gateway added.
func scrub(s string) string {
	for _, p := range probes {
		s = strings.ReplaceAll(strings.ReplaceAll(s, p[0], "<sent>"), p[1], "<sent>")
	}
	return s
}

// sameAsGhost fails t unless the answer to path equals, scrubbed, the
// answer to its ghost path, and the scrubbed answer holds nothing of B.
func sameAsGhost(t *testing.T, method, path, token string) reply {
	t.Helper()
	r, g := do(t, method, path, token, ""), do(t, method, ghostOf(path), token, "")
	if r.status != g.status || scrub(r.body) != scrub(g.body) {
		t.Errorf("%s %s tells B's name from a ghost: %d %s\nghost: %d %s", method, path, r.status, r.body, g.status, g.body)
	}
	noLeak(t, path, scrub(r.body))
	return r
}

// TestCrossTenantReadsHTTP: tenant A's admin token, over every read
// route, never sees tenant B's boards, members or aliases: each answers
// as a name nobody has does, and A's own board of the name B also has
// holds only A's rows.
func TestCrossTenantReadsHTTP(t *testing.T) {
	adminA := tokA(t, base(tenantA, "admin"))
	notFound := []string{
		"/v1/boards/zebra-vault",
		"/v1/boards/zebra-vault/top",
		"/v1/boards/zebra-vault/members/zq-whale-9931",
		"/v1/boards/zebra-vault/members/zq-whale-9931/around?radius=5",
		"/v1/boards/zebra-vault/ranks/1",
		"/v1/boards/zebra-vault/members?ids=zq-whale-9931",
		"/v1/boards/poker-final/members/zq-whale-9931",
		"/v1/boards/poker-final/members/email:zq@b.example",
		"/v1/boards/poker-final/members/zq-whale-9931/around",
		"/v1/identities/email:zq@b.example",
		"/v1/identities/zq-whale-9931",
		"/v1/identities/champion-b",
	}
	for _, p := range notFound {
		r := sameAsGhost(t, "GET", p, adminA)
		if r.status != 404 {
			t.Errorf("GET %s: %d %.200s, want 404", p, r.status, r.body)
		}
		protocolError(t, p, r)
	}
	for _, p := range []string{"/v1/boards", "/v1/boards/poker-final", "/v1/boards/poker-final/top?limit=1000",
		"/v1/boards/poker-final/ranks/1", "/v1/boards/poker-final/members?ids=champion,zq-whale-9931,zq-shark-4417"} {
		r := mustOK(t, "GET", p, adminA, "")
		noLeak(t, p, scrub(strings.ReplaceAll(r.body, "zq-shark-4417", "<sent>")))
	}
	// A page cursor of B's board list pages A's boards, never B's.
	if r := do(t, "GET", "/v1/boards?limit=1", tokB(t, base(tenantB, "admin")), ""); r.status == 200 {
		var page struct{ Next string }
		_ = json.Unmarshal([]byte(r.body), &page)
		if page.Next != "" {
			r := do(t, "GET", "/v1/boards?limit=100&after="+url.QueryEscape(page.Next), adminA, "")
			if r.status >= 500 {
				t.Errorf("A with B's cursor: %d %s", r.status, r.body)
			}
			noLeak(t, "A with B's cursor", scrub(strings.ReplaceAll(r.body, page.Next, "<sent>")))
		}
	}
	// A's writes to the names B has land in A's namespace only.
	sameAsGhost(t, "DELETE", "/v1/boards/poker-final/members/zq-whale-9931", adminA)
	sameAsGhost(t, "DELETE", "/v1/boards/zebra-vault", adminA)
	assertUntouched(t)
}

// TestCrossTenantSubscribe: tenant A's read token subscribing to B's
// board, or to B's member on A's board of the same name, gets the error a
// name nobody has gets; its views of A's poker-final show only A's rows,
// live, while B's board of that name changes.
func TestCrossTenantSubscribe(t *testing.T) {
	w := dialWS(t, tokA(t, base(tenantA, "read")))
	subs := map[string]map[string]any{
		"b": {"board": "zebra-vault", "view": map[string]any{"kind": "top", "limit": 10}},
		"a": {"board": "poker-final", "view": map[string]any{"kind": "around", "member": "zq-whale-9931", "radius": 5}},
	}
	got := map[string]string{}
	for _, ghost := range []bool{false, true} {
		for id, sub := range subs {
			msg := map[string]any{"type": "subscribe", "id": id}
			if ghost {
				msg["id"] = id + "-ghost"
			}
			for k, v := range sub {
				msg[k] = v
			}
			if ghost {
				b, _ := json.Marshal(msg)
				var g map[string]any
				_ = json.Unmarshal([]byte(ghostOf(string(b))), &g)
				msg = g
			}
			w.send(t, msg)
			m := w.until(t, 5*time.Second, "the answer to "+id, func(m map[string]any) bool { return m["id"] == msg["id"] })
			delete(m, "id")
			b, _ := json.Marshal(m)
			got[msg["id"].(string)] = scrub(string(b))
		}
	}
	for id := range subs {
		if got[id] != got[id+"-ghost"] {
			t.Errorf("subscribe %s tells B's name from a ghost: %s, ghost: %s", id, got[id], got[id+"-ghost"])
		}
		if !strings.Contains(got[id], `"type":"error"`) && !strings.Contains(got[id], `"rows":[]`) {
			t.Errorf("subscribe %s: %s", id, got[id])
		}
	}
	w.send(t, map[string]any{"type": "subscribe", "id": "m", "board": "poker-final", "view": map[string]any{"kind": "members", "members": []string{"zq-whale-9931", "champion"}}})
	w.send(t, map[string]any{"type": "subscribe", "id": "p", "board": "poker-final", "view": map[string]any{"kind": "top", "limit": 100}})
	w.until(t, 5*time.Second, "the top snapshot", isType("snapshot", "p"))
	// B's poker-final changes; A's must not hear of it. A's own change
	// afterwards proves the subscription still flows.
	adminB, adminA := tokB(t, base(tenantB, "admin")), tokA(t, base(tenantA, "admin"))
	mustOK(t, "POST", "/v1/boards/poker-final/scores", adminB, `{"member":"zq-late-7654321","score":1}`)
	bump := time.Now().UnixMilli() // a score runner-up never had: best applies it
	mustOK(t, "POST", "/v1/boards/poker-final/scores", adminA, fmt.Sprintf(`{"member":"runner-up","score":%d.5}`, 500000+bump%400000))
	w.until(t, 5*time.Second, "A's own diff", func(m map[string]any) bool {
		return m["id"] == "p" && strings.Contains(w.seen[len(w.seen)-1], fmt.Sprintf("%d.5", 500000+bump%400000))
	})
	noLeak(t, "tenant A's live views", scrub(w.all()))
}

// TestIdentityMergeEscape (issue 10 item 2): a token limited to slots-*
// must not rewrite poker-merge by linking poker-merge's champion as an
// alias of its own member; neither may a submit token, nor an admin token
// whose boards claim is empty or a list of patterns. The refusal is 403
// naming the alias, and poker-merge still shows its champion first. The
// test has boards of its own, so that a merge that gets through spoils no
// other test.
func TestIdentityMergeEscape(t *testing.T) {
	// Names of this run's own: the gateway outlives a run (go test -count).
	run := strconv.Itoa(int(mergeRuns.Add(1)))
	board, champ, second, thief := "poker-merge-"+run, "merge-champ-"+run, "merge-second-"+run, "thief-"+run
	adminA := tokA(t, base(tenantA, "admin"))
	mustOK(t, "PUT", "/v1/boards/"+board, adminA, `{}`)
	mustOK(t, "POST", "/v1/boards/"+board+"/scores", adminA, `{"scores":[{"member":"`+champ+`","score":999999},{"member":"`+second+`","score":5}]}`)
	slotsSubmit := tokA(t, base(tenantA, "submit").with("boards", []string{"slots-*"}))
	if r := do(t, "POST", "/v1/boards/"+board+"/scores", slotsSubmit, `{"member":"`+thief+`","score":1}`); r.status != 403 {
		t.Fatalf("the direct way in is open: %d %s", r.status, r.body)
	}
	mustOK(t, "POST", "/v1/boards/slots-1/scores", slotsSubmit, `{"member":"`+thief+`","score":1}`)
	cases := []struct{ name, token string }{
		{"submit token, boards slots-*", slotsSubmit},
		{"submit token, all boards", tokA(t, base(tenantA, "submit"))},
		{"admin token, boards slots-*", tokA(t, base(tenantA, "admin").with("boards", []string{"slots-*"}))},
		{"admin token, boards []", tokA(t, base(tenantA, "admin").with("boards", []string{}))},
		{"admin token, boards poker-* and slots-*", tokA(t, base(tenantA, "admin").with("boards", []string{"poker-*", "slots-*"}))},
	}
	for _, c := range cases {
		r := do(t, "POST", "/v1/identities", c.token, `{"member":"`+thief+`","aliases":["device:`+thief+`","`+champ+`"]}`)
		if r.status != 403 {
			t.Errorf("%s: merging merge-champ into thief: %d %s, want 403", c.name, r.status, r.body)
		} else if _, msg := protocolError(t, c.name, r); !strings.Contains(msg, champ) {
			t.Errorf("%s: refusal %q does not name the alias", c.name, msg)
		}
		// The other direction: thief as an alias of the champion merges too.
		if r := do(t, "POST", "/v1/identities", c.token, `{"member":"`+second+`","aliases":["`+thief+`"]}`); r.status != 403 {
			t.Errorf("%s: merging thief into merge-second: %d %s, want 403", c.name, r.status, r.body)
		}
	}
	top := mustOK(t, "GET", "/v1/boards/"+board+"/top", adminA, "").body
	if !strings.Contains(top, `"rank":1,"member":"`+champ+`","score":999999`) || strings.Contains(top, thief) || !strings.Contains(top, `"total":2`) {
		t.Errorf("poker-merge rewritten through identity links: %s", top)
	}
	if r := do(t, "GET", "/v1/identities/device:"+thief, adminA, ""); r.status == 200 {
		t.Errorf("a refused link was applied in part: %s", r.body)
	}
	// Aliases that resolve to nothing yet stay open to a scoped token, and
	// an admin token reaching every board may merge.
	mustOK(t, "POST", "/v1/identities", slotsSubmit, `{"member":"`+thief+`","aliases":["device:`+thief+`-phone"]}`)
	mustOK(t, "POST", "/v1/identities", adminA, `{"member":"`+champ+`","aliases":["`+second+`"]}`)
	if top := mustOK(t, "GET", "/v1/boards/"+board+"/top", adminA, "").body; !strings.Contains(top, `"total":1`) {
		t.Errorf("an allowed merge did not merge: %s", top)
	}
}

// mergeRuns numbers the runs of TestIdentityMergeEscape.
var mergeRuns atomic.Int32

// TestRefreshWithAnotherTenantsToken: a connection of tenant A that sends
// an auth message with tenant B's valid token is closed 4003, and nothing
// of B arrives before the close.
func TestRefreshWithAnotherTenantsToken(t *testing.T) {
	w := dialWS(t, tokA(t, base(tenantA, "read")))
	w.send(t, map[string]any{"type": "subscribe", "id": "p", "board": "poker-final", "view": map[string]any{"kind": "top", "limit": 10}})
	w.until(t, 5*time.Second, "the snapshot", isType("snapshot", "p"))
	w.send(t, map[string]any{"type": "auth", "token": tokB(t, base(tenantB, "read"))})
	w.send(t, map[string]any{"type": "subscribe", "id": "z", "board": "zebra-vault", "view": map[string]any{"kind": "top", "limit": 10}})
	if got := w.closeCode(5 * time.Second); got != 4003 {
		t.Errorf("closed %d, want 4003; received %q", got, w.seen)
	}
	noLeak(t, "refresh with tenant B's token", scrub(w.all()))
}

// TestRefreshNarrows: a refresh with a token of the same tenant that no
// longer reaches poker-final ends that subscription with forbidden, and no
// later change of poker-final is sent on it.
func TestRefreshNarrows(t *testing.T) {
	w := dialWS(t, tokA(t, base(tenantA, "read")))
	w.send(t, map[string]any{"type": "subscribe", "id": "p", "board": "poker-final", "view": map[string]any{"kind": "top", "limit": 10}})
	w.send(t, map[string]any{"type": "subscribe", "id": "s", "board": "slots-1", "view": map[string]any{"kind": "top", "limit": 10}})
	w.until(t, 5*time.Second, "poker-final's snapshot", isType("snapshot", "p"))
	w.send(t, map[string]any{"type": "auth", "token": tokA(t, base(tenantA, "read").with("boards", []string{"slots-*"}))})
	e := w.until(t, 5*time.Second, "poker-final's end", func(m map[string]any) bool { return m["id"] == "p" && m["type"] == "error" })
	if e["code"] != "forbidden" {
		t.Errorf("narrowed subscription ended with %v, want forbidden", e)
	}
	adminA := tokA(t, base(tenantA, "admin"))
	mustOK(t, "POST", "/v1/boards/poker-final/scores", adminA, `{"member":"narrow-check","score":3}`)
	mustOK(t, "POST", "/v1/boards/slots-1/scores", adminA, `{"member":"s-three","score":30}`)
	w.until(t, 5*time.Second, "slots-1's diff", func(m map[string]any) bool { return m["id"] == "s" && m["type"] == "diff" })
	// A second change of slots-1, made after poker-final's, arrives only
	// once poker-final's change has had its push too: by then any message
	// of the ended subscription would be here.
	mustOK(t, "POST", "/v1/boards/slots-1/scores", adminA, `{"member":"s-four","score":40}`)
	w.until(t, 5*time.Second, "slots-1's second diff", func(m map[string]any) bool {
		return m["id"] == "s" && m["type"] == "diff" && strings.Contains(fmt.Sprint(m["rows"]), "s-four")
	})
	if all := w.all(); strings.Contains(all, "narrow-check") {
		t.Errorf("poker-final still streams after the narrowing refresh: %s", all)
	}
	ended := false
	for _, m := range w.seen {
		if ended && strings.Contains(m, `"id":"p"`) {
			t.Errorf("subscription p after its end: %s", m)
		}
		ended = ended || strings.Contains(m, `"id":"p"`) && strings.Contains(m, `"forbidden"`)
	}
	mustOK(t, "DELETE", "/v1/boards/poker-final/members/narrow-check", adminA, "")
	mustOK(t, "DELETE", "/v1/boards/slots-1/members/s-three", adminA, "")
	mustOK(t, "DELETE", "/v1/boards/slots-1/members/s-four", adminA, "")
}

// TestBoardScopeOnSubscribe: a player's token limited to slots-* cannot
// watch poker-final in any view; each subscription is refused forbidden
// with no rows, and the connection keeps serving slots-1.
func TestBoardScopeOnSubscribe(t *testing.T) {
	w := dialWS(t, tokA(t, base(tenantA, "read").with("sub", "s-one", "boards", []string{"slots-*"})))
	views := []map[string]any{
		{"kind": "top", "limit": 10},
		{"kind": "around", "member": "champion", "radius": 5},
		{"kind": "around", "radius": 5},
		{"kind": "rank", "rank": 1},
		{"kind": "members", "members": []string{"champion", "runner-up"}},
	}
	for i, v := range views {
		id := fmt.Sprint("v", i)
		w.send(t, map[string]any{"type": "subscribe", "id": id, "board": "poker-final", "view": v})
		if m := w.until(t, 5*time.Second, "the answer to "+id, func(m map[string]any) bool { return m["id"] == id }); m["type"] != "error" || m["code"] != "forbidden" {
			t.Errorf("%v on poker-final: %v, want error forbidden", v, m)
		}
	}
	w.send(t, map[string]any{"type": "subscribe", "id": "own", "board": "slots-1", "view": map[string]any{"kind": "around", "radius": 1}})
	w.until(t, 5*time.Second, "slots-1's snapshot", isType("snapshot", "own"))
	if all := w.all(); strings.Contains(all, "1000000") || strings.Contains(all, `"member":"champion"`) {
		t.Errorf("poker-final's rows reached a slots-* token: %s", all)
	}
}
