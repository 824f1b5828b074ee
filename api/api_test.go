package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/edgetest"
)

const admin = auth.RoleAdmin

// TestEndpoints walks every endpoint of PROTOCOL.md once, through the real
// hub, and checks what each answers.
func TestEndpoints(t *testing.T) {
	e := newEnv(t, Config{})
	tok := e.token("a", admin)
	b := e.must(200, "PUT", "/v1/boards/weekly", tok, `{"order":"desc","policy":"best","windows":["all","week"]}`)
	if b["policy"] != "best" || b["retention"] != 8.0 {
		t.Errorf("PUT board: %v", b)
	}
	e.must(200, "POST", "/v1/boards/weekly/scores", tok,
		`{"scores":[{"member":"p1","score":100},{"member":"p2","score":300},{"member":"p3","score":200,"id":"m-1"}]}`)
	res := e.must(200, "POST", "/v1/boards/weekly/scores", tok, `{"member":"p1","score":250,"subscore":1}`)
	r0 := res["results"].([]any)[0].(map[string]any)
	if r0["rank"] != 2.0 || r0["applied"] != true || r0["duplicate"] != false || r0["seq"].(float64) < 1 {
		t.Errorf("submit result %v", r0)
	}
	dup := e.must(200, "POST", "/v1/boards/weekly/scores", tok, `{"member":"p3","score":999,"id":"m-1"}`)
	if d := dup["results"].([]any)[0].(map[string]any); d["duplicate"] != true || d["score"] != 200.0 {
		t.Errorf("duplicate answered %v", d)
	}
	top := e.must(200, "GET", "/v1/boards/weekly/top?limit=2", tok, "")
	if got := members(top); !slices.Equal(got, []string{"p2", "p1"}) || top["total"] != 3.0 {
		t.Errorf("top: %v", top)
	}
	m := e.must(200, "GET", "/v1/boards/weekly/members/p3", tok, "")
	if m["rank"] != 3.0 || m["top_percent"] != 100.0 {
		t.Errorf("member: %v", m)
	}
	if got := members(e.must(200, "GET", "/v1/boards/weekly/members/p1/around?radius=1", tok, "")); !slices.Equal(got, []string{"p2", "p1", "p3"}) {
		t.Errorf("around: %v", got)
	}
	if r := e.must(200, "GET", "/v1/boards/weekly/ranks/1", tok, ""); r["member"] != "p2" {
		t.Errorf("rank 1: %v", r)
	}
	e.must(404, "GET", "/v1/boards/weekly/ranks/4", tok, "")
	if got := members(e.must(200, "GET", "/v1/boards/weekly/members?ids=p3,p2,nobody", tok, "")); !slices.Equal(got, []string{"p2", "p3"}) {
		t.Errorf("members: %v", got)
	}
	if got := members(e.must(200, "GET", "/v1/boards/weekly/top?window=week", tok, "")); len(got) != 3 {
		t.Errorf("week window: %v", got)
	}
	if past := e.must(200, "GET", "/v1/boards/weekly/top?window=week&at=2020-01-01", tok, ""); past["total"] != 0.0 || past["seq"] != 0.0 {
		t.Errorf("a past week with no entries: %v", past)
	}
	list := e.must(200, "GET", "/v1/boards", tok, "")
	if bs := list["boards"].([]any); len(bs) != 1 || bs[0].(map[string]any)["members"] != 3.0 {
		t.Errorf("list: %v", list)
	}
	e.must(200, "GET", "/v1/boards/weekly", tok, "")
	id := e.must(200, "POST", "/v1/identities", tok, `{"member":"p1","aliases":["email:p1@x.io"]}`)
	if !slices.Equal(toStrings(id["aliases"]), []string{"email:p1@x.io"}) {
		t.Errorf("link: %v", id)
	}
	if got := e.must(200, "GET", "/v1/identities/email:p1@x.io", tok, ""); got["member"] != "p1" {
		t.Errorf("identity: %v", got)
	}
	if m := e.must(200, "GET", "/v1/boards/weekly/members/email:p1@x.io", tok, ""); m["member"] != "p1" {
		t.Errorf("member by alias: %v", m)
	}
	e.must(200, "DELETE", "/v1/boards/weekly/members/p2", tok, "")
	if got := members(e.must(200, "GET", "/v1/boards/weekly/top", tok, "")); !slices.Equal(got, []string{"p1", "p3"}) {
		t.Errorf("after remove: %v", got)
	}
	e.must(200, "POST", "/v1/boards/weekly/reset", tok, "")
	if top := e.must(200, "GET", "/v1/boards/weekly/top", tok, ""); top["total"] != 0.0 {
		t.Errorf("after reset: %v", top)
	}
	if top := e.must(200, "GET", "/v1/boards/weekly/top?window=week", tok, ""); top["total"] != 2.0 {
		t.Errorf("reset emptied the week window: %v", top)
	}
	e.must(409, "PUT", "/v1/boards/weekly", tok, `{"order":"asc","windows":["all","week"]}`)
	e.must(200, "DELETE", "/v1/boards/weekly", tok, "")
	e.must(404, "GET", "/v1/boards/weekly/top", tok, "")
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestTenancy: another tenant's token sees nothing and changes nothing, on
// every endpoint.
func TestTenancy(t *testing.T) {
	e := newEnv(t, Config{})
	a := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/shared", a, `{}`)
	e.must(200, "POST", "/v1/boards/shared/scores", a, `{"member":"p1","score":10}`)
	e.must(200, "POST", "/v1/identities", a, `{"member":"p1","aliases":["email:a@x.io"]}`)
	b := e.token("b", admin)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/boards/shared", ""},
		{"GET", "/v1/boards/shared/top", ""},
		{"GET", "/v1/boards/shared/members/p1", ""},
		{"GET", "/v1/boards/shared/members/p1/around", ""},
		{"GET", "/v1/boards/shared/ranks/1", ""},
		{"GET", "/v1/boards/shared/members?ids=p1", ""},
		{"POST", "/v1/boards/shared/scores", `{"member":"p1","score":99}`},
		{"POST", "/v1/boards/shared/reset", ""},
		{"DELETE", "/v1/boards/shared/members/p1", ""},
		{"DELETE", "/v1/boards/shared", ""},
		{"GET", "/v1/identities/email:a@x.io", ""},
	} {
		if status, out := e.do(c.method, c.path, b, c.body); status != http.StatusNotFound {
			t.Errorf("tenant b %s %s: %d %v, want 404", c.method, c.path, status, out)
		}
	}
	if list := e.must(200, "GET", "/v1/boards", b, ""); len(list["boards"].([]any)) != 0 {
		t.Errorf("tenant b lists %v", list)
	}
	// Tenant b's own board of the same name is its own.
	e.must(200, "PUT", "/v1/boards/shared", b, `{}`)
	if top := e.must(200, "GET", "/v1/boards/shared/top", b, ""); top["total"] != 0.0 {
		t.Errorf("tenant b sees %v", top)
	}
	if m := e.must(200, "GET", "/v1/boards/shared/members/p1", a, ""); m["score"] != 10.0 {
		t.Errorf("tenant a's entry changed: %v", m)
	}
}

// TestAuthRefusals: each way a request lacks the right to act.
func TestAuthRefusals(t *testing.T) {
	e := newEnv(t, Config{})
	e.must(200, "PUT", "/v1/boards/slots-1", e.token("a", admin), `{}`)
	e.must(200, "PUT", "/v1/boards/poker", e.token("a", admin), `{}`)
	tests := []struct {
		name, method, path, token, body, code string
	}{
		{"no token", "GET", "/v1/boards/slots-1/top", "", "", "unauthorized"},
		{"garbage token", "GET", "/v1/boards/slots-1/top", "garbage", "", "unauthorized"},
		{"reader submits", "POST", "/v1/boards/slots-1/scores", e.token("a", auth.RoleRead), `{"member":"x","score":1}`, "forbidden"},
		{"submitter configures", "PUT", "/v1/boards/slots-1", e.token("a", auth.RoleSubmit), `{}`, "forbidden"},
		{"submitter resets", "POST", "/v1/boards/slots-1/reset", e.token("a", auth.RoleSubmit), ``, "forbidden"},
		{"reader links", "POST", "/v1/identities", e.token("a", auth.RoleRead), `{"member":"x","aliases":["y"]}`, "forbidden"},
		{"board pattern", "GET", "/v1/boards/poker/top", e.token("a", auth.RoleRead, "slots-*"), "", "forbidden"},
		{"no roles", "GET", "/v1/boards/slots-1/top", e.token("a", 0), "", "forbidden"},
		{"no roles lists", "GET", "/v1/boards", e.token("a", 0), "", "forbidden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, out := e.do(tt.method, tt.path, tt.token, tt.body)
			if code, msg := errCode(out); code != tt.code {
				t.Errorf("code %q (%s), want %q", code, msg, tt.code)
			}
		})
	}
	// A board pattern filters the list.
	list := e.must(200, "GET", "/v1/boards", e.token("a", auth.RoleRead, "slots-*"), "")
	if bs := list["boards"].([]any); len(bs) != 1 {
		t.Errorf("pattern list: %v", list)
	}
}

// TestBadRequests: malformed input gets the documented 4xx naming the
// field, never a 5xx.
func TestBadRequests(t *testing.T) {
	e := newEnv(t, Config{MaxBody: 4096})
	tok := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/b1", tok, `{}`)
	big := fmt.Sprintf(`{"scores":[%s{"member":"x","score":1}]}`, strings.Repeat(`{"member":"x","score":1},`, 1000))
	tests := []struct {
		name, method, path, body string
		status                   int
		field                    string // the message must name it
	}{
		{"bad board name", "GET", "/v1/boards/Bad.Name/top", "", 400, "board"},
		{"board with star", "PUT", "/v1/boards/a*b", "{}", 400, "board"},
		{"unknown board", "GET", "/v1/boards/nope/top", "", 404, "nope"},
		{"limit zero", "GET", "/v1/boards/b1/top?limit=0", "", 400, "limit"},
		{"limit too big", "GET", "/v1/boards/b1/top?limit=1001", "", 400, "limit"},
		{"limit text", "GET", "/v1/boards/b1/top?limit=ten", "", 400, "limit"},
		{"negative offset", "GET", "/v1/boards/b1/top?offset=-1", "", 400, "offset"},
		{"radius too big", "GET", "/v1/boards/b1/members/x/around?radius=101", "", 400, "radius"},
		{"rank zero", "GET", "/v1/boards/b1/ranks/0", "", 400, "rank"},
		{"rank text", "GET", "/v1/boards/b1/ranks/first", "", 400, "rank"},
		{"bad window", "GET", "/v1/boards/b1/top?window=year", "", 400, "window"},
		{"bad at", "GET", "/v1/boards/b1/top?window=day&at=yesterday", "", 400, "at"},
		{"no ids", "GET", "/v1/boards/b1/members", "", 400, "ids"},
		{"too many ids", "GET", "/v1/boards/b1/members?ids=" + strings.Repeat("a,", 100) + "a", "", 400, "ids"},
		{"empty id in ids", "GET", "/v1/boards/b1/members?ids=a,,b", "", 400, "ids[1]"},
		{"member too long", "GET", "/v1/boards/b1/members/" + strings.Repeat("m", 129), "", 400, "member"},
		{"empty body", "POST", "/v1/boards/b1/scores", "", 400, "body"},
		{"not JSON", "POST", "/v1/boards/b1/scores", "{nope", 400, "body"},
		{"trailing data", "POST", "/v1/boards/b1/scores", `{"member":"x","score":1} {}`, 400, "body"},
		{"score as string", "POST", "/v1/boards/b1/scores", `{"member":"x","score":"1"}`, 400, "score"},
		{"score missing", "POST", "/v1/boards/b1/scores", `{"member":"x"}`, 400, "score"},
		{"member missing", "POST", "/v1/boards/b1/scores", `{"score":1}`, 400, "member"},
		{"score overflow", "POST", "/v1/boards/b1/scores", `{"member":"x","score":1e999}`, 400, "score"},
		{"unknown field", "POST", "/v1/boards/b1/scores", `{"member":"x","scroe":1}`, 400, "scroe"},
		{"empty member", "POST", "/v1/boards/b1/scores", `{"member":"","score":1}`, 400, "member"},
		{"control char member", "POST", "/v1/boards/b1/scores", `{"member":"a\u0007","score":1}`, 400, "member"},
		{"id too long", "POST", "/v1/boards/b1/scores", `{"member":"x","score":1,"id":"` + strings.Repeat("i", 129) + `"}`, 400, "id"},
		{"both shapes", "POST", "/v1/boards/b1/scores", `{"member":"x","score":1,"scores":[]}`, 400, "scores"},
		{"empty batch", "POST", "/v1/boards/b1/scores", `{"scores":[]}`, 400, "scores"},
		{"bad item names index", "POST", "/v1/boards/b1/scores", `{"scores":[{"member":"a","score":1},{"member":"b"}]}`, 400, "scores[1].score"},
		{"body too large", "POST", "/v1/boards/b1/scores", big, 413, "body"},
		{"bad policy", "PUT", "/v1/boards/b2", `{"policy":"max"}`, 400, "policy"},
		{"bad order", "PUT", "/v1/boards/b2", `{"order":"up"}`, 400, "order"},
		{"bad windows", "PUT", "/v1/boards/b2", `{"windows":["year"]}`, 400, "windows"},
		{"negative retention", "PUT", "/v1/boards/b2", `{"retention":-1}`, 400, "retention"},
		{"unknown time zone", "PUT", "/v1/boards/b2", `{"time_zone":"Mars/Olympus"}`, 400, "time_zone"},
		{"host's time zone", "PUT", "/v1/boards/b2", `{"time_zone":"Local"}`, 400, "time_zone"},
		{"bad week start", "PUT", "/v1/boards/b2", `{"week_starts":"friday"}`, 400, "week_starts"},
		{"settings wrong type", "PUT", "/v1/boards/b2", `{"windows":"all"}`, 400, "windows"},
		{"link no member", "POST", "/v1/identities", `{"aliases":["a"]}`, 400, "member"},
		{"unknown route", "GET", "/v1/nothing", "", 404, "/v1/nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := e.do(tt.method, tt.path, tok, tt.body)
			code, msg := errCode(out)
			if status != tt.status || code == "" || !strings.Contains(msg, tt.field) {
				t.Errorf("%d %s %q, want %d naming %q", status, code, msg, tt.status, tt.field)
			}
		})
	}
	if top := e.must(200, "GET", "/v1/boards/b1/top", tok, ""); top["total"] != 0.0 {
		t.Errorf("a refused request changed the board: %v", top)
	}
}

// TestRateLimit: tenant b may submit 5 items a second (its key file limit);
// more answer 429 while tenant a goes on.
func TestRateLimit(t *testing.T) {
	e := newEnv(t, Config{})
	b := e.token("b", admin)
	e.must(200, "PUT", "/v1/boards/r", b, `{}`)
	limited := false
	for i := range 40 {
		status, out := e.do("POST", "/v1/boards/r/scores", b, fmt.Sprintf(`{"member":"p%d","score":1}`, i))
		if status == http.StatusTooManyRequests {
			if code, _ := errCode(out); code != "rate_limited" {
				t.Fatalf("429 with code %q", code)
			}
			limited = true
			break
		}
	}
	if !limited {
		t.Fatal("40 submissions at a 5/s limit were all accepted")
	}
	a := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/r", a, `{}`)
	e.must(200, "POST", "/v1/boards/r/scores", a, `{"member":"p1","score":1}`)
}

func TestHealthAndMetrics(t *testing.T) {
	ready := false
	reg := prometheus.NewRegistry()
	e := newEnv(t, Config{Ready: func() bool { return ready }, Registry: reg})
	e.must(200, "GET", "/healthz", "", "")
	e.must(503, "GET", "/readyz", "", "")
	ready = true
	e.must(200, "GET", "/readyz", "", "")
	tok := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/m", tok, `{}`)
	e.must(200, "POST", "/v1/boards/m/scores", tok, `{"member":"p1","score":1}`)
	// Metrics are the operator's, on their own listener: never on the API port.
	e.must(404, "GET", "/metrics", "", "")
	e.must(404, "GET", "/metrics", tok, "")
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	raw := rec.Body.Bytes()
	for _, want := range []string{
		`rankwire_submissions_total{outcome="applied"} 1`,
		`rankwire_http_requests_total{code="200",method="POST",route="/v1/boards/{board}/scores"} 1`,
		`rankwire_board_members{board="m",tenant="casino-a"} 1`,
		`rankwire_apply_lag_seconds{tenant="casino-a"}`,
		`rankwire_tenant_writable{tenant="casino-a"} 1`,
		"rankwire_nats_connected 1", "rankwire_nats_disconnects_total 0", "rankwire_nats_reconnects_total 0",
		"rankwire_publish_errors_total 0", "rankwire_publish_retries_total 0", "rankwire_tenants_unavailable 0",
		`rankwire_publish_duration_seconds_bucket{le="10"} 2`, "rankwire_publish_duration_seconds_count 2",
	} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestScoreRank: the rank a new entry would take, ties included, on both
// orders and tiebreaks, and the bad inputs named.
func TestScoreRank(t *testing.T) {
	e := newEnv(t, Config{})
	tok := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/desc", tok, `{"order":"desc"}`)
	e.must(200, "PUT", "/v1/boards/asc", tok, `{"order":"asc","tiebreak":"latest"}`)
	for _, b := range []string{"desc", "asc"} {
		e.must(200, "POST", "/v1/boards/"+b+"/scores", tok,
			`{"scores":[{"member":"p1","score":100},{"member":"p2","score":300},{"member":"p3","score":200,"subscore":5}]}`)
	}
	for _, tc := range []struct {
		board, query string
		rank         float64
	}{
		{"desc", "score=1000", 1},
		{"desc", "score=300", 2}, // ties go to the earlier entry
		{"desc", "score=200&subscore=5", 3},
		{"desc", "score=200&subscore=6", 2},
		{"desc", "score=250", 2},
		{"desc", "score=-1", 4},
		{"asc", "score=100", 1}, // latest-first: a new entry wins the tie
		{"asc", "score=150", 2},
		{"asc", "score=300", 3},
		{"asc", "score=301", 4},
	} {
		got := e.must(200, "GET", "/v1/boards/"+tc.board+"/score-rank?"+tc.query, tok, "")
		if got["rank"] != tc.rank || got["total"] != 3.0 {
			t.Errorf("%s ?%s: %v, want rank %v of 3", tc.board, tc.query, got, tc.rank)
		}
	}
	e.must(200, "PUT", "/v1/boards/empty", tok, `{}`)
	if got := e.must(200, "GET", "/v1/boards/empty/score-rank?score=5", tok, ""); got["rank"] != 1.0 || got["total"] != 0.0 {
		t.Errorf("an empty board: %v", got)
	}
	for _, tc := range []struct{ query, field string }{
		{"", "score"},
		{"score=abc", "score"},
		{"score=NaN", "score"},
		{"score=Inf", "score"},
		{"score=1&subscore=-Inf", "subscore"},
		{"score=1e999", "score"},
	} {
		status, out := e.do("GET", "/v1/boards/desc/score-rank?"+tc.query, tok, "")
		if code, msg := errCode(out); status != 400 || code == "" || !strings.Contains(msg, tc.field) {
			t.Errorf("?%s: %d %s %q, want 400 naming %s", tc.query, status, code, msg, tc.field)
		}
	}
	e.must(404, "GET", "/v1/boards/nope/score-rank?score=1", tok, "")
	e.must(403, "GET", "/v1/boards/desc/score-rank?score=1", e.token("a", auth.RoleSubmit), "") // no read role
	e.must(404, "GET", "/v1/boards/desc/score-rank?score=1", e.token("b", admin), "")           // another tenant
}

// TestReadyzWarnsOfStaleKeySets: a tenant's key set that cannot be fetched
// leaves the node ready (the last good keys verify) and says so in /readyz's
// warnings, naming no tenant: /readyz needs no token.
func TestReadyzWarnsOfStaleKeySets(t *testing.T) {
	e := newEnv(t, Config{})
	if _, out := e.do("GET", "/readyz", "", ""); out["warnings"] != nil {
		t.Fatalf("warnings without any jwks_url: %v", out)
	}
	keys, err := auth.ParseKeys(fmt.Appendf(nil, `{"tenants":{
		"casino-a":{"keys":[{"kid":"a1","alg":"HS256","secret":%q}],"jwks_url":"https://127.0.0.1:1/jwks"},
		"casino-b":{"keys":[{"kid":"b1","alg":"HS256","secret":%q}]}}}`, edgetest.Secret('a'), edgetest.Secret('b')))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.api.cfg.Verifier.Swap(keys); err != nil {
		t.Fatal(err)
	}
	e.api.cfg.Verifier.RefreshJWKS(context.Background(), true)
	out := e.must(200, "GET", "/readyz", "", "")
	w, _ := out["warnings"].([]any)
	if len(w) != 1 || !strings.Contains(fmt.Sprint(w[0]), "jwks_url") || strings.Contains(fmt.Sprint(out), "casino") {
		t.Fatalf("/readyz %v: want one warning about a key set, naming no tenant", out)
	}
}
