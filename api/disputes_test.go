package api

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

// newClockEnv is newEnv on a hub whose clock the test sets (*now, unix ms).
func newClockEnv(t *testing.T, now *atomic.Int64) *env {
	t.Helper()
	keys, h := startTestHub(t, `"submissions_per_second":50,"schedules":2`, hub.Config{Now: func() time.Time { return time.UnixMilli(now.Load()) }})
	s := New(Config{Hub: h, Verifier: auth.NewVerifier(keys, auth.Options{}), Keys: keys})
	srv := httptest.NewServer(specChecked(t, s))
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, keys: keys, hub: h, api: s}
}

// prizeTable renders standings rows as "member:rank:prize" (a trailing !
// where the prize is held), and checks the revision.
func prizeTable(t *testing.T, out map[string]any, revision int) string {
	t.Helper()
	if got := out["revision"].(float64); int(got) != revision {
		t.Fatalf("revision %v, want %d: %v", got, revision, out)
	}
	var parts []string
	for _, r := range out["rows"].([]any) {
		row := r.(map[string]any)
		p, _ := row["prize"].(string)
		s := fmt.Sprintf("%s:%v:%s", row["member"], row["rank"], p)
		if row["prize_held"] == true {
			s += "!"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// Disputes over HTTP against the real hub: a live disqualification and
// reinstatement, a held prize reserved for its member, a disqualification
// after the end passing the prizes down, settlement refused before the
// standings are final, every amendment refused after it (409 naming
// settled), the audit log paged, and the other tenant's board of the same
// name untouched.
func TestDisputesOverHTTP(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var now atomic.Int64
	now.Store(start.UnixMilli())
	e := newClockEnv(t, &now)
	board := `{"ends_at":"2030-01-01T01:00:00Z","rules":{"max_step":1000},"prizes":[{"from":1,"to":1,"prize":"€100"},{"from":2,"to":2,"prize":"€50"},{"from":3,"to":3,"prize":"€25"}]}`
	scores := `{"scores":[{"member":"a","score":500},{"member":"b","score":400},{"member":"c","score":300},{"member":"d","score":200}]}`
	admin, other := e.token("a", auth.RoleAdmin), e.token("b", auth.RoleAdmin)
	for _, tok := range []string{admin, other} {
		e.must(200, "PUT", "/v1/boards/cup", tok, board)
		e.must(200, "POST", "/v1/boards/cup/scores", tok, scores)
	}
	e.must(200, "POST", "/v1/boards/cup/scores", admin, `{"member":"b","score":90000}`) // held: past max_step

	act := e.must(200, "POST", "/v1/boards/cup/disqualify", admin, `{"member":"d","reason":"live: multi-accounting"}`)
	if act["action"] != "disqualify" || act["member"] != "d" || act["sub"] != "p1" || act["revision"].(float64) != 1 {
		t.Fatalf("live disqualify: %v", act)
	}
	got := prizeTable(t, e.must(200, "GET", "/v1/boards/cup/standings", admin, ""), 1)
	if want := "a:1:€100 b:2:€50! c:3:€25"; got != want {
		t.Fatalf("live, d disqualified: %s, want %s", got, want)
	}
	e.must(200, "POST", "/v1/boards/cup/reinstate", admin, `{"member":"d","reason":"cleared"}`)

	now.Store(start.Add(time.Hour + time.Second).UnixMilli()) // ended, not final
	e.must(200, "POST", "/v1/boards/cup/disqualify", admin, `{"member":"a","reason":"ticket 7: bot"}`)
	out := e.must(200, "GET", "/v1/boards/cup/standings", admin, "")
	if want := "b:1:€100! c:2:€50 d:3:€25"; prizeTable(t, out, 3) != want || out["final"] != false || out["settled"] != false {
		t.Fatalf("ended, a disqualified: %s %v, want %s", prizeTable(t, out, 3), out, want)
	}
	out = e.must(409, "POST", "/v1/boards/cup/settle", admin, `{"reason":"paid"}`)
	if code, msg := errCode(out); code != "conflict" || !strings.HasPrefix(msg, "ends_at: ") {
		t.Fatalf("settle before final: %s %q", code, msg)
	}

	now.Store(start.Add(time.Hour + 2*hub.MaxWriteTimeout).UnixMilli()) // final
	e.must(200, "POST", "/v1/boards/cup/settle", admin, `{"reason":"paid out"}`)
	out = e.must(200, "GET", "/v1/boards/cup/standings", admin, "")
	if out["settled"] != true || out["final"] != true || prizeTable(t, out, 3) != "b:1:€100! c:2:€50 d:3:€25" {
		t.Fatalf("settled: %v", out)
	}
	for path, body := range map[string]string{"disqualify": `{"member":"b","reason":"x"}`,
		"reinstate": `{"member":"a","reason":"x"}`, "settle": `{"reason":"x"}`} {
		out = e.must(409, "POST", "/v1/boards/cup/"+path, admin, body)
		if code, msg := errCode(out); code != "conflict" || !strings.HasPrefix(msg, "settled: ") {
			t.Errorf("%s after settle: %s %q", path, code, msg)
		}
	}

	audit := e.must(200, "GET", "/v1/audit?board=cup&limit=3", admin, "")
	acts := audit["actions"].([]any)
	if len(acts) != 3 || acts[0].(map[string]any)["reason"] != "live: multi-accounting" || audit["next"] == nil {
		t.Fatalf("audit page 1: %v", audit)
	}
	audit = e.must(200, "GET", fmt.Sprintf("/v1/audit?board=cup&after=%v", audit["next"]), admin, "")
	acts = audit["actions"].([]any)
	if len(acts) != 1 || acts[0].(map[string]any)["action"] != "settle" || audit["next"] != nil {
		t.Fatalf("audit page 2: %v", audit)
	}

	// The other tenant's board of the same name: as its submissions made it.
	out = e.must(200, "GET", "/v1/boards/cup/standings", other, "")
	if got := prizeTable(t, out, 0); got != "a:1:€100 b:2:€50 c:3:€25 d:4:" || out["settled"] != false {
		t.Fatalf("tenant b: %s %v", got, out)
	}
	if acts := e.must(200, "GET", "/v1/audit?board=cup", other, "")["actions"].([]any); len(acts) != 0 {
		t.Fatalf("tenant b's audit: %v", acts)
	}
}

// Amendments name the field they refuse, and need role admin on the board.
func TestDisputesRefusals(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	e := newClockEnv(t, &now)
	admin := e.token("a", auth.RoleAdmin)
	e.must(200, "PUT", "/v1/boards/cup", admin, `{}`)
	e.must(200, "POST", "/v1/boards/cup/scores", admin, `{"member":"a","score":1}`)
	for _, c := range []struct{ path, body, field string }{
		{"disqualify", `{"reason":"x"}`, "member"},
		{"disqualify", `{"member":"a"}`, "reason"},
		{"disqualify", `{"member":"a","reason":"x","seq":1}`, "seq"},
		{"settle", `{"member":"a","reason":"x"}`, "member"},
		{"reinstate", `{"member":"a","reason":"x"}`, "member"}, // not disqualified: 409
	} {
		_, out := e.do("POST", "/v1/boards/cup/"+c.path, admin, c.body)
		if _, msg := errCode(out); !strings.HasPrefix(msg, c.field) {
			t.Errorf("%s %s: %q, want the field %s", c.path, c.body, msg, c.field)
		}
	}
	e.must(404, "POST", "/v1/boards/none/disqualify", admin, `{"member":"a","reason":"x"}`)
	e.must(403, "POST", "/v1/boards/cup/disqualify", e.token("a", auth.RoleRead|auth.RoleSubmit), `{"member":"a","reason":"x"}`)
	e.must(403, "POST", "/v1/boards/cup/disqualify", e.token("a", auth.RoleAdmin, "other-*"), `{"member":"a","reason":"x"}`)
	e.must(403, "GET", "/v1/audit?board=cup", e.token("a", auth.RoleAdmin, "other-*"), "")
	if _, msg := errCode(e.must(400, "GET", "/v1/audit", admin, "")); !strings.HasPrefix(msg, "board: ") {
		t.Errorf("audit without board: %q", msg)
	}
	if _, msg := errCode(e.must(400, "GET", "/v1/audit?board=cup&after=x", admin, "")); !strings.HasPrefix(msg, "after: ") {
		t.Errorf("audit with a bad after: %q", msg)
	}
}

// Void over HTTP against the real hub: a live void restores the member's
// previous best, a second one takes the member out (no submission left)
// and the prizes pass down; after the end a void still amends; after
// settlement it is refused naming settled. Unknown seqs, a seq of another
// board or only of another tenant, and a seq voided already are refused
// naming seq; the twin tenant with the same board and seqs is untouched.
func TestVoidOverHTTP(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var now atomic.Int64
	now.Store(start.UnixMilli())
	e := newClockEnv(t, &now)
	board := `{"ends_at":"2030-01-01T01:00:00Z","windows":["all","day"],"prizes":[{"from":1,"to":1,"prize":"€100"},{"from":2,"to":2,"prize":"€50"},{"from":3,"to":3,"prize":"€25"}]}`
	scores := `{"scores":[{"member":"a","score":500},{"member":"b","score":400},{"member":"c","score":300},{"member":"d","score":200}]}`
	admin, other := e.token("a", auth.RoleAdmin), e.token("b", auth.RoleAdmin)
	for _, tok := range []string{admin, other} {
		e.must(200, "PUT", "/v1/boards/cup", tok, board)
		e.must(200, "POST", "/v1/boards/cup/scores", tok, scores)
		e.must(200, "PUT", "/v1/boards/side", tok, `{}`)
	}
	res := e.must(200, "POST", "/v1/boards/cup/scores", admin, `{"member":"a","score":900}`)
	if r := res["results"].([]any)[0].(map[string]any); r["seq"].(float64) != 5 {
		t.Fatalf("the cheat's result: %v", res)
	}
	e.must(200, "POST", "/v1/boards/cup/scores", other, `{"member":"a","score":900}`)
	for i := range 3 { // seqs 6..8 on tenant b's cup only, 1..3 on tenant a's side board
		e.must(200, "POST", "/v1/boards/cup/scores", other, fmt.Sprintf(`{"member":"z%d","score":1}`, i))
		e.must(200, "POST", "/v1/boards/side/scores", admin, fmt.Sprintf(`{"member":"z%d","score":1}`, i))
	}

	act := e.must(200, "POST", "/v1/boards/cup/void", admin, `{"seq":5,"reason":"ticket 9: replayed packet"}`)
	if act["action"] != "void" || act["voided"].(float64) != 5 || act["member"] != "a" || act["sub"] != "p1" || act["revision"].(float64) != 1 {
		t.Fatalf("live void: %v", act)
	}
	if row := e.must(200, "GET", "/v1/boards/cup/members/a?window=day", admin, ""); row["score"].(float64) != 500 {
		t.Fatalf("a's day entry after the void: %v", row)
	}
	e.must(200, "POST", "/v1/boards/cup/void", admin, `{"seq":1,"reason":"ticket 9: first one too"}`)
	if got := prizeTable(t, e.must(200, "GET", "/v1/boards/cup/standings", admin, ""), 2); got != "b:1:€100 c:2:€50 d:3:€25" {
		t.Fatalf("a without submissions: %s", got)
	}
	for _, c := range []struct {
		status      int
		body, field string
	}{
		{404, `{"seq":99,"reason":"x"}`, "seq: 99"},
		{404, `{"seq":7,"reason":"x"}`, "seq: 7"}, // only tenant b's cup reached 7
		{409, `{"seq":5,"reason":"x"}`, "seq: 5 was already voided"},
		{400, `{"seq":0,"reason":"x"}`, "seq: "},
		{400, `{"seq":2}`, "reason: "},
		{400, `{"member":"a","reason":"x"}`, "member"},
	} {
		if _, msg := errCode(e.must(c.status, "POST", "/v1/boards/cup/void", admin, c.body)); !strings.HasPrefix(msg, c.field) {
			t.Errorf("void %s: %q, want %q", c.body, msg, c.field)
		}
	}
	e.must(404, "POST", "/v1/boards/none/void", admin, `{"seq":1,"reason":"x"}`)
	e.must(403, "POST", "/v1/boards/cup/void", e.token("a", auth.RoleRead|auth.RoleSubmit), `{"seq":2,"reason":"x"}`)
	e.must(403, "POST", "/v1/boards/cup/void", e.token("a", auth.RoleAdmin, "other-*"), `{"seq":2,"reason":"x"}`)

	now.Store(start.Add(time.Hour + time.Second).UnixMilli()) // ended, not final
	e.must(200, "POST", "/v1/boards/cup/void", admin, `{"seq":2,"reason":"ticket 10"}`)
	if got := prizeTable(t, e.must(200, "GET", "/v1/boards/cup/standings", admin, ""), 3); got != "c:1:€100 d:2:€50" {
		t.Fatalf("ended, b voided: %s", got)
	}
	now.Store(start.Add(time.Hour + 2*hub.MaxWriteTimeout).UnixMilli()) // final
	e.must(200, "POST", "/v1/boards/cup/settle", admin, `{"reason":"paid out"}`)
	if code, msg := errCode(e.must(409, "POST", "/v1/boards/cup/void", admin, `{"seq":3,"reason":"late"}`)); code != "conflict" || !strings.HasPrefix(msg, "settled: ") {
		t.Fatalf("void after settle: %s %q", code, msg)
	}
	acts := e.must(200, "GET", "/v1/audit?board=cup", admin, "")["actions"].([]any)
	if len(acts) != 4 || acts[0].(map[string]any)["voided"].(float64) != 5 || acts[2].(map[string]any)["voided"].(float64) != 2 {
		t.Fatalf("audit: %v", acts)
	}

	// The twin tenant: its cup as its submissions made it.
	if got := prizeTable(t, e.must(200, "GET", "/v1/boards/cup/standings", other, ""), 0); got != "a:1:€100 b:2:€50 c:3:€25 d:4: z0:5: z1:6: z2:7:" {
		t.Fatalf("tenant b: %s", got)
	}
}
