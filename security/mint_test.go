package security

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMintBoundary attacks POST /v1/tokens: no token, a read or a submit
// token (alone or together), a token without roles, the other tenant's
// read token: none mints. An admin's minted token is of its own tenant
// (tenant B's boards stay out of reach, whatever the body says), a scoped
// admin cannot widen its boards, and no minted token reaches the log.
func TestMintBoundary(t *testing.T) {
	for name, tok := range map[string]string{
		"read":        tokA(t, base(tenantA, "read")),
		"submit":      tokA(t, base(tenantA, "submit")),
		"read+submit": tokA(t, base(tenantA, "read", "submit")),
		"no roles":    tokA(t, base(tenantA)),
		"B's read":    tokB(t, base(tenantB, "read")),
		"RS256 read":  rs(t, "a2", base(tenantA, "read")),
	} {
		for _, body := range []string{`{"role":"read"}`, `{"role":"admin"}`} {
			r := do(t, "POST", "/v1/tokens", tok, body)
			if code, _ := protocolError(t, name, r); r.status != 403 || code != "forbidden" || strings.Contains(r.body, "token\":") {
				t.Errorf("%s token mints %s: %d %s", name, body, r.status, r.body)
			}
		}
	}
	if r := do(t, "POST", "/v1/tokens", "", `{"role":"read"}`); r.status != 401 {
		t.Errorf("no token mints: %d %s", r.status, r.body)
	}
	// An admin of A, whatever it asks, mints a token of A.
	for _, body := range []string{`{"role":"admin","tenant":"casino-b"}`, `{"role":"admin","tnt":"casino-b"}`} {
		if r := do(t, "POST", "/v1/tokens", tokA(t, base(tenantA, "admin")), body); r.status != 400 {
			t.Errorf("a body naming a tenant: %d %s", r.status, r.body)
		}
	}
	got := mint(t, tokA(t, base(tenantA, "admin")), `{"role":"admin","sub":"attacker"}`)
	if got.Tenant != tenantA {
		t.Fatalf("minted for tenant %q", got.Tenant)
	}
	r := mustOK(t, "GET", "/v1/boards", got.Token, "")
	noLeak(t, "boards with a minted token", r.body)
	noLeak(t, "poker-final with a minted token", mustOK(t, "GET", "/v1/boards/poker-final/top", got.Token, "").body)

	// A scoped admin mints within its boards only, even from an RS256 token
	// (the gateway signs with the tenant's HS256 secret).
	scoped := rs(t, "a2", base(tenantA, "admin").with("boards", []string{"poker-*"}))
	for _, body := range []string{`{"role":"read","boards":["*"]}`, `{"role":"read","boards":["p*"]}`, `{"role":"read","boards":["slots"]}`} {
		if r := do(t, "POST", "/v1/tokens", scoped, body); r.status != 403 {
			t.Errorf("a scoped admin widens its boards with %s: %d %s", body, r.status, r.body)
		}
	}
	narrow := mint(t, scoped, `{"role":"admin"}`)
	if len(narrow.Boards) != 1 || narrow.Boards[0] != "poker-*" || narrow.Kid != "a1" {
		t.Fatalf("a scoped admin's default token: %+v", narrow)
	}
	if r := do(t, "GET", "/v1/boards/slots/top", narrow.Token, ""); r.status != 403 {
		t.Errorf("the narrow token reads slots: %d", r.status)
	}
}

// mintedToken is the answer of POST /v1/tokens.
type mintedToken struct {
	Token, Tenant, Kid string
	Boards             []string
}

// mint mints a token with caller and records it for the log search.
func mint(t *testing.T, caller, body string) mintedToken {
	t.Helper()
	var out mintedToken
	if err := json.Unmarshal([]byte(mustOK(t, "POST", "/v1/tokens", caller, body).body), &out); err != nil || out.Token == "" {
		t.Fatalf("mint %s: %v %+v", body, err, out)
	}
	minted(out.Token)
	return out
}
