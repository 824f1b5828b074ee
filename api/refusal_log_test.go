package api

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/logtest"
	"github.com/rankwire/rankwire/internal/refusal"
)

// TestHTTPRefusalsLogged: a refused token (401), a scope refusal (403) and
// a limit (429) each leave one "http refused" line with the reason and the
// tenant where known, and no line holds the token.
func TestHTTPRefusalsLogged(t *testing.T) {
	var logs logtest.Buffer
	e := newEnv(t, Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), SubmissionsPerSecond: 1})
	e.must(200, "PUT", "/v1/boards/poker", e.token("a", admin), `{}`)
	expired := e.token("a", auth.RoleRead) + "x" // a bad signature
	scoped := e.token("a", auth.RoleRead, "slots-*")
	e.do("GET", "/v1/boards/poker/top", expired, "")
	e.do("GET", "/v1/boards/poker/top", scoped, "")
	e.do("POST", "/v1/boards/poker/scores", e.token("a", admin), `{"scores":[{"member":"a","score":1},{"member":"b","score":2}]}`)

	want := map[string]bool{refusal.Token: false, refusal.Forbidden: false, refusal.RateLimited: false}
	for _, l := range logs.Lines() {
		raw, _ := json.Marshal(l)
		if strings.Contains(string(raw), expired) || strings.Contains(string(raw), scoped) {
			t.Fatalf("a log line holds a token: %s", raw)
		}
		if l["msg"] != "http refused" {
			continue
		}
		reason, _ := l["reason"].(string)
		if _, ok := want[reason]; !ok {
			t.Errorf("unexpected refusal %s", raw)
			continue
		}
		if l["tenant"] != "casino-a" {
			t.Errorf("%s: tenant %v, want casino-a: %s", reason, l["tenant"], raw)
		}
		want[reason] = true
	}
	for reason, seen := range want {
		if !seen {
			t.Errorf("no http refused line with reason %s; log:\n%s", reason, logs.String())
		}
	}
}
