package security

import (
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"
)

// forgedTokens are tokens an attacker can make: each must be refused
// (401 on HTTP, a close on WebSocket) and read or change nothing.
func forgedTokens(t *testing.T) map[string]string {
	adminA := base(tenantA, "admin")
	block, _ := pem.Decode(gw.rsaPubPEM)
	valid := tokA(t, adminA)
	now := time.Now()
	evilRSA, evilEC := attackerKeys(t)
	return map[string]string{
		"attacker's key embedded as jwk": signedBy(t, jwt.SigningMethodRS256, evilRSA, map[string]any{"kid": "a2", "jwk": jwkOf(&evilRSA.PublicKey)}, adminA),
		"attacker's key set by jku":      signedBy(t, jwt.SigningMethodRS256, evilRSA, map[string]any{"kid": "a2", "jku": "http://127.0.0.1:1/keys.json"}, adminA),
		"attacker's certificate by x5u":  signedBy(t, jwt.SigningMethodRS256, evilRSA, map[string]any{"kid": "a2", "x5u": "http://127.0.0.1:1/cert.pem"}, adminA),
		"ES256 under the RS kid":         signedBy(t, jwt.SigningMethodES256, evilEC, map[string]any{"kid": "a2"}, adminA),
		"PS256 by A's own RS key":        signedBy(t, jwt.SigningMethodPS256, gw.rsaA, map[string]any{"kid": "a2"}, adminA),
		"kid of 20 KiB":                  hs(t, strings.Repeat("a1", 10<<10), gw.secretA, adminA),
		"alg none":                       unsigned(map[string]any{"alg": "none", "typ": "JWT", "kid": "a1"}, adminA),
		"alg None":                       unsigned(map[string]any{"alg": "None", "kid": "a1"}, adminA),
		"alg NONE without kid":           unsigned(map[string]any{"alg": "NONE"}, adminA),
		"HS256 keyed with RS key's PEM":  hs(t, "a2", gw.rsaPubPEM, adminA),
		"HS256 keyed with RS key's DER":  hs(t, "a2", block.Bytes, adminA),
		"RS256 under an HS kid":          rs(t, "a1", adminA),
		"unknown kid":                    hs(t, "zz", gw.secretA, adminA),
		"no kid":                         hs(t, "", gw.secretA, adminA),
		"kid with a path":                hs(t, "../b1", gw.secretB, adminA),
		"B's kid claiming tenant A":      hs(t, "b1", gw.secretB, adminA),
		"A's kid claiming tenant B":      hs(t, "a1", gw.secretA, base(tenantB, "admin")),
		"A's RS kid claiming tenant B":   rs(t, "a2", base(tenantB, "admin")),
		"wrong secret":                   hs(t, "a1", []byte(strings.Repeat("x", 40)), adminA),
		"signature cut":                  valid[:strings.LastIndexByte(valid, '.')+1],
		"signature altered":              valid[:len(valid)-2] + flip(valid[len(valid)-2:]),
		"expired":                        tokA(t, adminA.with("exp", now.Add(-2*time.Minute).Unix())),
		"nbf in the future":              tokA(t, adminA.with("nbf", now.Add(5*time.Minute).Unix())),
		"wrong aud":                      tokA(t, adminA.with("aud", "other-service")),
		"no aud":                         tokA(t, adminA.with("aud", nil)),
		"missing tnt":                    tokA(t, adminA.with("tnt", nil)),
		"empty tnt":                      tokA(t, adminA.with("tnt", "")),
		"tnt not a string":               tokA(t, adminA.with("tnt", []string{tenantA, tenantB})),
		"missing exp":                    tokA(t, adminA.with("exp", nil)),
		"exp a string":                   tokA(t, adminA.with("exp", "2099-01-01")),
		"garbage":                        "not.a.jwt",
		"empty header part":              "." + strings.SplitN(valid, ".", 2)[1],
	}
}

func flip(s string) string {
	if s == "AA" {
		return "BB"
	}
	return "AA"
}

// TestForgedTokensAreRefused: every JWT attack class answers 401
// unauthorized on every route, changes nothing, and shows nothing of
// either tenant.
func TestForgedTokensAreRefused(t *testing.T) {
	routes := []struct{ method, path, body string }{
		{"GET", "/v1/boards", ""},
		{"GET", "/v1/boards/poker-final/top", ""},
		{"GET", "/v1/boards/zebra-vault/top", ""},
		{"GET", "/v1/identities/email:zq@b.example", ""},
		{"POST", "/v1/boards/poker-final/scores", `{"member":"forger","score":1e15}`},
		{"POST", "/v1/boards/zebra-vault/scores", `{"member":"forger","score":1e15}`},
		{"PUT", "/v1/boards/forged-board", `{}`},
		{"DELETE", "/v1/boards/poker-final", ""},
		{"POST", "/v1/identities", `{"member":"forger","aliases":["champion"]}`},
	}
	for name, tok := range forgedTokens(t) {
		t.Run(name, func(t *testing.T) {
			for _, rt := range routes {
				r := do(t, rt.method, rt.path, tok, rt.body)
				what := name + ": " + rt.method + " " + rt.path
				if r.status != 401 {
					t.Errorf("%s: %d %.200s, want 401", what, r.status, r.body)
				}
				protocolError(t, what, r)
				noLeak(t, what, r.body)
				if strings.Contains(r.body, "champion") {
					t.Errorf("%s: answer names tenant A's member: %.200s", what, r.body)
				}
			}
		})
	}
	assertUntouched(t)
}

// TestForgedTokensCannotConnect: the same tokens on WebSocket, as
// access_token and as a first auth message, are closed 4003 (4001 for the
// expired one) before any data.
func TestForgedTokensCannotConnect(t *testing.T) {
	for name, tok := range forgedTokens(t) {
		t.Run(name, func(t *testing.T) {
			want := websocket.StatusCode(4003)
			if name == "expired" {
				want = 4001
			}
			viaQuery := dialWS(t, tok)
			viaQuery.send(t, map[string]any{"type": "subscribe", "id": "s1", "board": "poker-final", "view": map[string]any{"kind": "top", "limit": 10}})
			viaAuth := dialWS(t, "")
			viaAuth.send(t, map[string]any{"type": "auth", "token": tok})
			viaAuth.send(t, map[string]any{"type": "subscribe", "id": "s1", "board": "zebra-vault", "view": map[string]any{"kind": "top", "limit": 10}})
			for how, w := range map[string]*wsConn{"access_token": viaQuery, "auth message": viaAuth} {
				if got := w.closeCode(3 * time.Second); got != want {
					t.Errorf("%s: closed %d, want %d; received %q", how, got, want, w.seen)
				}
				assertNoRows(t, name+" by "+how, w)
			}
		})
	}
}

// assertNoRows fails t where w received a snapshot or diff or any of
// either tenant's names.
func assertNoRows(t *testing.T, what string, w *wsConn) {
	t.Helper()
	all := w.all()
	noLeak(t, what, scrub(all))
	if strings.Contains(all, "champion") || strings.Contains(all, "snapshot") {
		t.Errorf("%s: refused connection received data: %s", what, all)
	}
}

// assertUntouched checks that no attack changed either tenant's boards:
// tenant A's poker-final still has exactly its two members with champion
// first, tenant B's boards are as seeded, and no forged board exists.
func assertUntouched(t *testing.T) {
	t.Helper()
	adminA, adminB := tokA(t, base(tenantA, "admin")), tokB(t, base(tenantB, "admin"))
	top := mustOK(t, "GET", "/v1/boards/poker-final/top?limit=100", adminA, "").body
	if !strings.Contains(top, `"total":2`) || !strings.Contains(top, `"rank":1,"member":"champion","score":1000000`) {
		t.Errorf("tenant A's poker-final changed: %s", top)
	}
	for _, path := range []string{"/v1/boards/zebra-vault/top", "/v1/boards/poker-final/top"} {
		body := mustOK(t, "GET", path, adminB, "").body
		if !strings.Contains(body, `"rank":1,"member":"zq-whale-9931","score":7654321.5`) || strings.Contains(body, "forger") || strings.Contains(body, "thief") {
			t.Errorf("tenant B's %s changed: %s", path, body)
		}
	}
	for _, tok := range []string{adminA, adminB} {
		if r := do(t, "GET", "/v1/boards/forged-board", tok, ""); r.status != 404 {
			t.Errorf("a forged PUT created a board: %d %s", r.status, r.body)
		}
	}
}

// TestValidTokensAreAccepted is the control of the forged-token tests:
// the same routes accept each tenant's valid tokens, RS256 and HS256, and
// exp and nbf within the 30 s leeway, so the refusals above are refusals
// of the forgery and not of everything.
func TestValidTokensAreAccepted(t *testing.T) {
	now := time.Now()
	valid := map[string]string{
		"HS256 of A":          tokA(t, base(tenantA, "read")),
		"RS256 of A":          rs(t, "a2", base(tenantA, "read")),
		"HS256 of B":          tokB(t, base(tenantB, "read")),
		"expired 10 s ago":    tokA(t, base(tenantA, "read").with("exp", now.Add(-10*time.Second).Unix())),
		"nbf 10 s ahead":      tokA(t, base(tenantA, "read").with("nbf", now.Add(10*time.Second).Unix())),
		"aud as a list":       tokA(t, base(tenantA, "read").with("aud", []string{"rankwire"})),
		"boards poker-*":      tokA(t, base(tenantA, "read").with("boards", []string{"poker-*"})),
		"player with sub":     tokA(t, base(tenantA, "read").with("sub", "champion", "boards", []string{"poker-final"})),
		"admin implies read":  tokA(t, base(tenantA, "admin")),
		"boards * admin of B": tokB(t, base(tenantB, "admin").with("boards", []string{"*"})),
	}
	for name, tok := range valid {
		r := do(t, "GET", "/v1/boards/poker-final/top", tok, "")
		if r.status != 200 {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
		if name == "expired 10 s ago" {
			continue // a live connection ends at exp itself (4001): the leeway covers a request, not a stay
		}
		w := dialWS(t, tok)
		w.send(t, map[string]any{"type": "subscribe", "id": "c", "board": "poker-final", "view": map[string]any{"kind": "top", "limit": 1}})
		if m := w.until(t, 5*time.Second, name+"'s snapshot", func(m map[string]any) bool { return m["id"] == "c" }); m["type"] != "snapshot" {
			t.Errorf("%s on WebSocket: %v", name, m)
		}
	}
}
