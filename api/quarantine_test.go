package api

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rankwire/rankwire/auth"
)

// TestQuarantineAPI: a board's rules over HTTP: a held submission's reply,
// the list (admin only, paged), approve and reject, the errors named, the
// metric by rule; another tenant and a read token cannot reach any of it.
func TestQuarantineAPI(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, Config{Registry: reg})
	tok := e.token("a", admin)
	board := e.must(200, "PUT", "/v1/boards/b", tok, `{"rules":{"min_score":0,"max_score":1000,"max_step":100,"max_per_minute":60}}`)
	if rules, _ := board["rules"].(map[string]any); rules["max_step"] != 100.0 || rules["max_per_minute"] != 60.0 {
		t.Fatalf("the board's rules: %v", board)
	}
	out := e.must(200, "POST", "/v1/boards/b/scores", tok,
		`{"scores":[{"member":"p1","score":50},{"member":"p1","score":500},{"member":"p2","score":5000},{"member":"p3","score":-1}]}`)
	results := out["results"].([]any)
	for i, want := range []string{"", "max_step", "max_score", "min_score"} {
		r := results[i].(map[string]any)
		if want == "" {
			if r["applied"] != true || r["quarantined"] != nil {
				t.Errorf("result %d: %v, want applied", i, r)
			}
			continue
		}
		if r["applied"] != false || r["quarantined"] != true || r["reason"] != want || r["qid"] != []string{"", "1", "2", "3"}[i] {
			t.Errorf("result %d: %v, want quarantined for %s", i, r, want)
		}
	}

	page := e.must(200, "GET", "/v1/boards/b/quarantine?limit=2", tok, "")
	rows := page["rows"].([]any)
	if len(rows) != 2 || page["next"] != "2" {
		t.Fatalf("first page: %v", page)
	}
	first := rows[0].(map[string]any)
	if first["qid"] != "1" || first["member"] != "p1" || first["score"] != 500.0 || first["reason"] != "max_step" ||
		!strings.HasSuffix(first["at"].(string), "Z") {
		t.Fatalf("a held row: %v", first)
	}
	if last := e.must(200, "GET", "/v1/boards/b/quarantine?after=2", tok, ""); len(last["rows"].([]any)) != 1 || last["next"] != nil {
		t.Fatalf("the last page: %v", last)
	}

	approved := e.must(200, "POST", "/v1/boards/b/quarantine/1/approve", tok, "")
	if approved["applied"] != true || approved["score"] != 500.0 || approved["rank"] != 1.0 {
		t.Fatalf("approve: %v", approved)
	}
	e.must(200, "POST", "/v1/boards/b/quarantine/2/reject", tok, "")
	e.must(404, "POST", "/v1/boards/b/quarantine/2/approve", tok, "") // decided already
	e.must(404, "POST", "/v1/boards/b/quarantine/99/reject", tok, "")
	for _, tc := range []struct{ method, path, field string }{
		{"POST", "/v1/boards/b/quarantine/x/approve", "qid"},
		{"POST", "/v1/boards/b/quarantine/0/reject", "qid"},
		{"GET", "/v1/boards/b/quarantine?after=-1", "after"},
		{"GET", "/v1/boards/b/quarantine?limit=1001", "limit"},
	} {
		status, out := e.do(tc.method, tc.path, tok, "")
		if code, msg := errCode(out); status != 400 || code == "" || !strings.Contains(msg, tc.field) {
			t.Errorf("%s %s: %d %s %q, want 400 naming %s", tc.method, tc.path, status, code, msg, tc.field)
		}
	}
	for _, body := range []struct{ json, field string }{
		{`{"rules":{"min_score":5,"max_score":1}}`, "rules.min_score"},
		{`{"rules":{"max_step":0}}`, "rules.max_step"},
		{`{"rules":{"max_per_minute":-1}}`, "rules.max_per_minute"},
		{`{"rules":{"max_step":"big"}}`, "max_step"},
		{`{"rules":{"max_burst":3}}`, "max_burst"},
	} {
		status, out := e.do("PUT", "/v1/boards/b", tok, body.json)
		if code, msg := errCode(out); status != 400 || code == "" || !strings.Contains(msg, body.field) {
			t.Errorf("PUT %s: %d %s %q, want 400 naming %s", body.json, status, code, msg, body.field)
		}
	}

	// Only an admin of the tenant, on a token that reaches the board.
	read := e.token("a", auth.RoleRead|auth.RoleSubmit)
	e.must(403, "GET", "/v1/boards/b/quarantine", read, "")
	e.must(403, "POST", "/v1/boards/b/quarantine/3/approve", read, "")
	e.must(403, "POST", "/v1/boards/b/quarantine/3/reject", read, "")
	e.must(403, "GET", "/v1/boards/b/quarantine", e.token("a", admin, "other"), "")
	other := e.token("b", admin)
	e.must(404, "GET", "/v1/boards/b/quarantine", other, "")
	e.must(404, "POST", "/v1/boards/b/quarantine/3/approve", other, "")
	e.must(404, "POST", "/v1/boards/b/quarantine/3/reject", other, "")
	if rows := e.must(200, "GET", "/v1/boards/b/quarantine", tok, "")["rows"].([]any); len(rows) != 1 {
		t.Fatalf("the refused decisions changed the quarantine: %v", rows)
	}

	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		`rankwire_submissions_quarantined_total{rule="max_step"} 1`,
		`rankwire_submissions_quarantined_total{rule="max_score"} 1`,
		`rankwire_submissions_quarantined_total{rule="min_score"} 1`,
		`rankwire_submissions_quarantined_total{rule="max_per_minute"} 0`,
		`rankwire_submissions_total{outcome="quarantined"} 3`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestDecisionReasonAudited: an approve and a reject take an optional
// reason; each is recorded in the board's audit with the token's sub and
// the qid; a bad reason is a 400 naming reason and decides nothing; the
// twin tenant's board of the same name shows none of it.
func TestDecisionReasonAudited(t *testing.T) {
	e := newEnv(t, Config{})
	for _, tn := range []string{"a", "b"} {
		tok := e.token(tn, admin)
		e.must(200, "PUT", "/v1/boards/b", tok, `{"rules":{"max_score":1000}}`)
		e.must(200, "POST", "/v1/boards/b/scores", tok, `{"scores":[{"member":"p1","score":5000},{"member":"p2","score":6000}]}`)
	}
	tok := e.token("a", admin)
	long := `{"reason":"` + strings.Repeat("x", 257) + `"}`
	for _, body := range []string{long, `{"reason":"a\u0001b"}`, `{"why":"x"}`, `{"reason":7}`} {
		status, out := e.do("POST", "/v1/boards/b/quarantine/1/approve", tok, body)
		if code, msg := errCode(out); status != 400 || code != "bad_request" || !strings.Contains(msg, "reason") && !strings.Contains(msg, "why") {
			t.Errorf("approve %s: %d %s %q, want 400 naming the field", body, status, code, msg)
		}
	}
	e.must(200, "POST", "/v1/boards/b/quarantine/1/approve", tok, `{"reason":"ticket 7: real win"}`)
	e.must(200, "POST", "/v1/boards/b/quarantine/2/reject", tok, "")
	acts := e.must(200, "GET", "/v1/audit?board=b", tok, "")["actions"].([]any)
	if len(acts) != 2 {
		t.Fatalf("audit: %v, want the two decisions", acts)
	}
	for i, want := range []map[string]any{
		{"action": "approve", "member": "p1", "sub": "p1", "reason": "ticket 7: real win", "qid": "1"},
		{"action": "reject", "member": "p2", "sub": "p1", "reason": "", "qid": "2"},
	} {
		got := acts[i].(map[string]any)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("action %d: %s = %v, want %v (%v)", i, k, got[k], v, got)
			}
		}
	}
	twin := e.must(200, "GET", "/v1/audit?board=b", e.token("b", admin), "")
	if n := len(twin["actions"].([]any)); n != 0 {
		t.Fatalf("the twin tenant's audit: %v", twin)
	}
	if n := len(e.must(200, "GET", "/v1/boards/b/quarantine", e.token("b", admin), "")["rows"].([]any)); n != 2 {
		t.Fatalf("the twin tenant's quarantine holds %d, want 2", n)
	}
}
