package auth_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/await"
)

// idp is a local HTTPS identity provider whose published key set a test
// changes while the gateway's Verifier runs.
type idp struct {
	srv  *httptest.Server
	mu   sync.Mutex
	body []byte
	code int
	hits int
}

func newIDP(t *testing.T) *idp {
	p := &idp{code: http.StatusOK}
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.hits++
		w.WriteHeader(p.code)
		w.Write(p.body)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// publish makes the provider serve keys (kid → Ed25519 public key) with status 200.
func (p *idp) publish(keys map[string]ed25519.PublicKey) {
	var set struct {
		Keys []map[string]string `json:"keys"`
	}
	for kid, pub := range keys {
		set.Keys = append(set.Keys, map[string]string{"kty": "OKP", "crv": "Ed25519", "use": "sig", "alg": "EdDSA",
			"kid": kid, "x": base64.RawURLEncoding.EncodeToString(pub)})
	}
	p.serve(http.StatusOK, must(json.Marshal(set)))
}

func (p *idp) serve(code int, body []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.code, p.body = code, body
}

// jwksRing is a key file whose tenants each name the JWKS at their URL, and
// casino-a also has one HS256 key "a-hs".
func jwksRing(t *testing.T, urls map[string]string) *auth.Keyring {
	t.Helper()
	ts := map[string]any{}
	for tenant, u := range urls {
		e := map[string]any{"jwks_url": u}
		if tenant == "casino-a" {
			e["keys"] = []map[string]string{{"kid": "a-hs", "alg": "HS256", "secret": b64(randomBytes(32))}}
		}
		ts[tenant] = e
	}
	k, err := auth.ParseKeys(must(json.Marshal(map[string]any{"tenants": ts})))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func edKey() ed25519.PrivateKey {
	_, priv := must2(ed25519.GenerateKey(rand.Reader))
	return priv
}

func jwksVerifier(ring *auth.Keyring, p *idp, minRefetch time.Duration) *auth.Verifier {
	return auth.NewVerifier(ring, auth.Options{Now: func() time.Time { return now },
		JWKS: auth.JWKSOptions{Client: p.srv.Client(), MinRefetch: minRefetch, Refresh: time.Hour}})
}

func edToken(t *testing.T, kid string, key ed25519.PrivateKey, tenant string) string {
	return sign(t, jwt.SigningMethodEdDSA, kid, key, with(func(c jwt.MapClaims) { c["tnt"] = tenant }))
}

// TestJWKSRotation: a key the provider publishes verifies its tenant's
// tokens; a key it rotates in is accepted without a restart (the unknown kid
// makes the running Verifier fetch again); a key it drops stops verifying.
func TestJWKSRotation(t *testing.T) {
	p := newIDP(t)
	k1, k2 := edKey(), edKey()
	p.publish(map[string]ed25519.PublicKey{"idp-1": k1.Public().(ed25519.PublicKey)})
	v := jwksVerifier(jwksRing(t, map[string]string{"casino-a": p.srv.URL + "/jwks.json?secret=s3"}), p, 10*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); v.RunJWKS(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	tok1 := edToken(t, "idp-1", k1, "casino-a")
	await.For(t, 5*time.Second, func() error { _, err := v.Verify(tok1); return err })
	sc, _ := v.Verify(tok1)
	if sc.Tenant != "casino-a" || sc.Kid != "idp-1" {
		t.Fatalf("scope %+v", sc)
	}
	tok2 := edToken(t, "idp-2", k2, "casino-a")
	if _, err := v.Verify(tok2); !errors.Is(err, auth.ErrUnknownKey) {
		t.Fatalf("a kid not published yet: %v, want ErrUnknownKey", err)
	}
	p.publish(map[string]ed25519.PublicKey{"idp-2": k2.Public().(ed25519.PublicKey)})
	await.For(t, 5*time.Second, func() error { _, err := v.Verify(tok2); return err })
	v.RefreshJWKS(ctx, true)
	if _, err := v.Verify(tok1); !errors.Is(err, auth.ErrUnknownKey) {
		t.Fatalf("a kid the provider dropped: %v, want ErrUnknownKey (its cached token too)", err)
	}
	st := v.JWKSStatus()
	if len(st) != 1 || st[0].Keys != 1 || st[0].Stale() || strings.Contains(st[0].URL, "secret") {
		t.Fatalf("status %+v: want one fresh key and a URL without its query", st)
	}
}

// TestJWKSUnreachableKeepsKeys: with the provider failing, the keys of the
// last fetch that worked still verify, and the status says the set is stale.
func TestJWKSUnreachableKeepsKeys(t *testing.T) {
	p := newIDP(t)
	k1 := edKey()
	p.publish(map[string]ed25519.PublicKey{"idp-1": k1.Public().(ed25519.PublicKey)})
	v := jwksVerifier(jwksRing(t, map[string]string{"casino-a": p.srv.URL}), p, time.Millisecond)
	ctx := context.Background()
	v.RefreshJWKS(ctx, true)
	tok := edToken(t, "idp-1", k1, "casino-a")
	for _, fail := range []func(){
		func() { p.serve(http.StatusInternalServerError, nil) },
		func() { p.serve(http.StatusOK, []byte(`{"keys":`)) },
		func() { p.srv.Close() },
	} {
		fail()
		v.RefreshJWKS(ctx, true)
		if _, err := v.Verify(tok); err != nil {
			t.Fatalf("cached key refused while the provider fails: %v", err)
		}
		st := v.JWKSStatus()
		if len(st) != 1 || !st[0].Stale() || st[0].Keys != 1 || st[0].LastSuccess.IsZero() {
			t.Fatalf("status %+v: want stale, one key, a last success", st)
		}
	}
}

// TestJWKSBoundaries attacks the tenant boundary through key sets: a token
// naming another tenant, a published kid that the key file owns, a kid two
// tenants publish, and a set republishing another tenant's key.
func TestJWKSBoundaries(t *testing.T) {
	pa, pb := newIDP(t), newIDP(t)
	ka, kb, shared := edKey(), edKey(), edKey()
	pa.publish(map[string]ed25519.PublicKey{"a-1": ka.Public().(ed25519.PublicKey), "a-hs": kb.Public().(ed25519.PublicKey),
		"both": shared.Public().(ed25519.PublicKey)})
	pb.publish(map[string]ed25519.PublicKey{"b-1": kb.Public().(ed25519.PublicKey), "both": shared.Public().(ed25519.PublicKey),
		"b-copy": ka.Public().(ed25519.PublicKey)})
	ring := jwksRing(t, map[string]string{"casino-a": pa.srv.URL, "casino-b": pb.srv.URL})
	// Both providers' certificates come from httptest's one CA.
	v := jwksVerifier(ring, pa, time.Hour)
	v.RefreshJWKS(context.Background(), true)

	cases := []struct {
		name, kid, tenant string
		key               ed25519.PrivateKey
		want              error
	}{
		{"own key", "a-1", "casino-a", ka, nil},
		{"other tenant's key, own tnt", "b-1", "casino-a", kb, auth.ErrWrongTenant},
		{"kid the key file owns", "a-hs", "casino-a", kb, auth.ErrAlgorithm},
		{"kid two sets publish", "both", "casino-b", shared, auth.ErrUnknownKey},
		{"another tenant's key material", "b-copy", "casino-b", ka, auth.ErrUnknownKey},
	}
	for _, c := range cases {
		_, err := v.Verify(edToken(t, c.kid, c.key, c.tenant))
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if !ring.Holds("a-1", "casino-a") || ring.Holds("a-1", "casino-c") {
		t.Error("Holds: a published kid is held for its tenant only")
	}

	// A reload that drops casino-a's jwks_url stops its published keys at once.
	next := jwksRing(t, map[string]string{"casino-b": pb.srv.URL})
	if _, err := v.Swap(next); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(edToken(t, "a-1", ka, "casino-a")); !errors.Is(err, auth.ErrUnknownKey) {
		t.Fatalf("after the URL was removed: %v, want ErrUnknownKey", err)
	}
}

// TestJWKSKeyFile: jwks_url must be https; a tenant may have it and no keys.
func TestJWKSKeyFile(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"http://idp.example/jwks", "jwks_url"},
		{"https://user:pw@idp.example/jwks", "jwks_url"},
		{"https:///jwks", "jwks_url"},
		{"https://idp.example/.well-known/jwks.json", ""},
	} {
		_, err := auth.ParseKeys([]byte(fmt.Sprintf(`{"tenants":{"casino-a":{"jwks_url":%q}}}`, c.url)))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want an error naming %q", c.url, err, c.want)
		}
	}
	if _, err := auth.ParseKeys([]byte(`{"tenants":{"casino-a":{}}}`)); err == nil || !strings.Contains(err.Error(), "jwks_url") {
		t.Errorf("no keys and no jwks_url: %v", err)
	}
}

// TestJWKSParse: every key type rankwire verifies with is read from a set;
// others are skipped.
func TestJWKSParse(t *testing.T) {
	f := loadFixture()
	p := newIDP(t)
	rsaPub := f.rsaKey.PublicKey
	ecPub := f.ecKey.PublicKey
	ecBytes := must(ecPub.Bytes())
	set := map[string]any{"keys": []map[string]string{
		{"kty": "RSA", "kid": "r", "alg": "RS256", "n": raw(rsaPub.N.Bytes()), "e": raw([]byte{1, 0, 1})},
		{"kty": "EC", "kid": "e", "crv": "P-256", "x": raw(ecBytes[1:33]), "y": raw(ecBytes[33:])},
		{"kty": "OKP", "kid": "o", "crv": "Ed25519", "alg": "Ed25519", "x": raw(f.edKey.Public().(ed25519.PublicKey))},
		{"kty": "RSA", "kid": "enc", "use": "enc", "n": raw(rsaPub.N.Bytes()), "e": raw([]byte{1, 0, 1})},
		{"kty": "oct", "kid": "sym", "k": raw([]byte("secret"))},
		{"kty": "EC", "kid": "off-curve", "crv": "P-256", "x": raw(make([]byte, 32)), "y": raw(make([]byte, 32))},
		{"kty": "EC", "kid": "wrong-alg", "alg": "RS256", "crv": "P-256", "x": raw(ecBytes[1:33]), "y": raw(ecBytes[33:])},
		{"kty": "OKP", "crv": "Ed25519", "x": raw(f.edKey.Public().(ed25519.PublicKey))},
	}}
	p.serve(http.StatusOK, must(json.Marshal(set)))
	v := jwksVerifier(jwksRing(t, map[string]string{"casino-b": p.srv.URL}), p, time.Hour)
	v.RefreshJWKS(context.Background(), true)
	if st := v.JWKSStatus(); len(st) != 1 || st[0].Keys != 3 {
		t.Fatalf("status %+v: want the 3 signing keys", st)
	}
	claims := with(func(c jwt.MapClaims) { c["tnt"] = "casino-b" })
	for _, tok := range []string{
		sign(t, jwt.SigningMethodRS256, "r", f.rsaKey, claims),
		sign(t, jwt.SigningMethodES256, "e", f.ecKey, claims),
		sign(t, jwt.SigningMethodEdDSA, "o", f.edKey, claims),
	} {
		if _, err := v.Verify(tok); err != nil {
			t.Errorf("published key: %v", err)
		}
	}
}

func raw(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
