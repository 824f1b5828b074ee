package api

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

// TestMintToken: an admin mints a token of its own tenant, which works
// against the API within what was asked (role, boards, sub, expiry) and
// reads only its own tenant's board where the twin tenant has one of the
// same name.
func TestMintToken(t *testing.T) {
	e := newEnv(t, Config{})
	for _, tn := range []string{"a", "b"} {
		tok := e.token(tn, admin)
		e.must(200, "PUT", "/v1/boards/weekly", tok, `{}`)
		e.must(200, "PUT", "/v1/boards/daily", tok, `{}`)
		e.must(200, "POST", "/v1/boards/weekly/scores", tok, fmt.Sprintf(`{"member":"only-%s","score":1}`, tn))
	}
	before := time.Now().Truncate(time.Second)
	out := e.must(200, "POST", "/v1/tokens", e.token("a", admin), `{"role":"read","boards":["weekly"],"sub":"p42","ttl":"1h"}`)
	tok, _ := out["token"].(string)
	if out["tenant"] != "casino-a" || out["kid"] != "a1" || out["role"] != "read" || out["sub"] != "p42" ||
		fmt.Sprint(out["boards"]) != "[weekly]" || tok == "" {
		t.Fatalf("minted: %v", out)
	}
	sc, err := e.api.cfg.Verifier.Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	if exp := sc.Expiry.Sub(before); sc.Subject != "p42" || sc.Roles != auth.RoleRead || exp < time.Hour || exp > time.Hour+5*time.Second {
		t.Fatalf("claims %+v (expires in %v)", sc, exp)
	}
	if top := members(e.must(200, "GET", "/v1/boards/weekly/top", tok, "")); fmt.Sprint(top) != "[only-a]" {
		t.Fatalf("the minted token reads %v, want casino-a's board only", top)
	}
	e.must(403, "GET", "/v1/boards/daily/top", tok, "")                              // not in its boards
	e.must(403, "POST", "/v1/boards/weekly/scores", tok, `{"member":"x","score":1}`) // read only
	e.must(403, "POST", "/v1/tokens", tok, `{"role":"read"}`)                        // a read token mints nothing

	// Defaults: every board of the caller's reach, 24 h, no sub.
	def := e.must(200, "POST", "/v1/tokens", e.token("a", admin), `{"role":"admin"}`)
	if _, ok := def["boards"]; ok || def["sub"] != nil {
		t.Fatalf("default token: %v, want every board and no sub", def)
	}
	if exp, _ := time.Parse(time.RFC3339, def["expires_at"].(string)); exp.Sub(before) < 24*time.Hour || exp.Sub(before) > 24*time.Hour+5*time.Second {
		t.Fatalf("default expiry %v", def["expires_at"])
	}
}

// TestMintTokenRefused: who may mint, and within what: the role, the
// boards of the caller's reach, the lifetime, the fields, each refusal
// naming its field; a tenant is never named by the body.
func TestMintTokenRefused(t *testing.T) {
	e := newEnv(t, Config{})
	scoped := e.token("a", admin, "cup-*", "weekly")
	for _, tc := range []struct {
		name, tok, body string
		status          int
		field           string
	}{
		{"read token", e.token("a", auth.RoleRead), `{"role":"read"}`, 403, "role"},
		{"submit token", e.token("a", auth.RoleSubmit), `{"role":"read"}`, 403, "role"},
		{"unknown role", e.token("a", admin), `{"role":"root"}`, 400, "role"},
		{"no role", e.token("a", admin), `{}`, 400, "role"},
		{"another tenant", e.token("a", admin), `{"role":"read","tenant":"casino-b"}`, 400, "tenant"},
		{"board beyond reach", scoped, `{"role":"read","boards":["daily"]}`, 403, "boards[0]"},
		{"every board from a scoped token", scoped, `{"role":"read","boards":["*"]}`, 403, "boards[0]"},
		{"a wider pattern", scoped, `{"role":"read","boards":["weekly","cup*"]}`, 403, "boards[1]"},
		{"a bad board", e.token("a", admin), `{"role":"read","boards":["Weekly"]}`, 400, "boards[0]"},
		{"ttl zero", e.token("a", admin), `{"role":"read","ttl":"0s"}`, 400, "ttl"},
		{"ttl under a minute", e.token("a", admin), `{"role":"read","ttl":"59s"}`, 400, "ttl"},
		{"ttl over 366 days", e.token("a", admin), `{"role":"read","ttl":"8784h1s"}`, 400, "ttl"},
		{"ttl not a duration", e.token("a", admin), `{"role":"read","ttl":"a day"}`, 400, "ttl"},
		{"ttl a number", e.token("a", admin), `{"role":"read","ttl":86400}`, 400, "ttl"},
		{"bad sub", e.token("a", admin), `{"role":"read","sub":"` + strings.Repeat("x", 129) + `"}`, 400, "sub"},
	} {
		status, out := e.do("POST", "/v1/tokens", tc.tok, tc.body)
		if code, msg := errCode(out); status != tc.status || !strings.Contains(msg, tc.field) {
			t.Errorf("%s: %d %s %q, want %d naming %s", tc.name, status, code, msg, tc.status, tc.field)
		}
	}
	// Within reach: a narrower pattern, a name its pattern matches, the
	// longest ttl; no boards asked: the caller's own.
	for body, want := range map[string]string{
		`{"role":"admin","boards":["cup-x*","cup-final"],"ttl":"8784h"}`: "[cup-x* cup-final]",
		`{"role":"submit"}`:           "[cup-* weekly]",
		`{"role":"read","boards":[]}`: "[]",
	} {
		if out := e.must(200, "POST", "/v1/tokens", scoped, body); fmt.Sprint(out["boards"]) != want {
			t.Errorf("%s: boards %v, want %s", body, out["boards"], want)
		}
	}
}

// TestMintTokenRate: past the key file's token_mints_per_minute (casino-b
// keeps the default) a mint answers rate_limited naming the limit, and the
// twin tenant mints on.
func TestMintTokenRate(t *testing.T) {
	e := newEnv(t, Config{})
	for i := range auth.DefaultTokenMints {
		e.must(200, "POST", "/v1/tokens", e.token("b", admin), fmt.Sprintf(`{"role":"read","sub":"p%d"}`, i))
	}
	status, out := e.do("POST", "/v1/tokens", e.token("b", admin), `{"role":"read"}`)
	if code, msg := errCode(out); status != 429 || code != "rate_limited" || !strings.Contains(msg, "token_mints_per_minute") {
		t.Fatalf("one past the limit: %d %s %q", status, code, msg)
	}
	e.must(200, "POST", "/v1/tokens", e.token("a", admin), `{"role":"read"}`)
}

// TestMintTokenNoSecret: a tenant whose key file entry holds only a public
// key gets 409 naming tenant and saying why: the gateway has no private
// key to sign with.
func TestMintTokenNoSecret(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(pub)
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	keys, err := auth.ParseKeys(fmt.Appendf(nil, `{"tenants":{"casino-p":{"keys":[{"kid":"p1","alg":"EdDSA","public_key":%q}]}}}`, pemKey))
	if err != nil {
		t.Fatal(err)
	}
	_, h := startTestHub(t, "", hub.Config{})
	srv := httptest.NewServer(New(Config{Hub: h, Verifier: auth.NewVerifier(keys, auth.Options{}), Keys: keys}))
	t.Cleanup(srv.Close)
	tok, err := auth.Mint(auth.SigningKey{ID: "p1", Alg: auth.EdDSA, Key: priv},
		auth.Claims{Tenant: "casino-p", Roles: admin, Expiry: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, srv: srv}
	status, out := e.do("POST", "/v1/tokens", tok, `{"role":"read"}`)
	if code, msg := errCode(out); status != 409 || code != "conflict" || !strings.HasPrefix(msg, "tenant: ") || !strings.Contains(msg, "only public keys") {
		t.Fatalf("a tenant without a secret: %d %s %q", status, code, msg)
	}
}
