package auth_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
)

func TestMintRoundTrip(t *testing.T) {
	f := loadFixture()
	c := auth.Claims{
		Tenant: "casino-a", Subject: "p7", Roles: auth.RoleSubmit | auth.RoleRead, Boards: []string{"slots-*"},
		Expiry: now.Add(time.Hour), NotBefore: now.Add(-time.Minute), IssuedAt: now,
	}
	want := auth.Scope{Tenant: "casino-a", Subject: "p7", Roles: c.Roles, Boards: c.Boards, Expiry: c.Expiry}
	hsKey, _ := f.keys.SigningKey("a-hs")
	tests := []struct {
		name string
		key  auth.SigningKey
	}{
		{"HS256 from the keyring", hsKey},
		{"RS256", auth.SigningKey{ID: "a-rs", Alg: auth.RS256, Key: f.rsaKey}},
		{"ES256", auth.SigningKey{ID: "a-es", Alg: auth.ES256, Key: f.ecKey}},
		{"EdDSA", auth.SigningKey{ID: "a-ed", Alg: auth.EdDSA, Key: f.edKey}},
	}
	v := verifier(f)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			token, err := auth.Mint(tc.key, c)
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.Verify(token)
			if err != nil || !sameScope(got, want) {
				t.Errorf("Verify(Mint) = %+v, %v; want %+v", got, err, want)
			}
		})
	}
}

func TestMintBoardsEmptyMeansNone(t *testing.T) {
	f := loadFixture()
	key, _ := f.keys.SigningKey("a-hs")
	token, err := auth.Mint(key, auth.Claims{Tenant: "casino-a", Roles: auth.RoleRead, Boards: []string{}, Expiry: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := verifier(f).Verify(token)
	if err != nil || s.Boards == nil || s.CanBoard("weekly") {
		t.Errorf("Verify = %+v, %v; want a scope reaching no board", s, err)
	}
}

func TestMintErrors(t *testing.T) {
	f := loadFixture()
	ok := auth.Claims{Tenant: "casino-a", Expiry: now.Add(time.Hour)}
	hs := auth.SigningKey{ID: "a-hs", Alg: auth.HS256, Key: f.secretA}
	p384 := must(ecdsa.GenerateKey(elliptic.P384(), rand.Reader))
	tests := []struct {
		name   string
		key    auth.SigningKey
		claims auth.Claims
		msg    string
	}{
		{"no tenant", hs, auth.Claims{Expiry: now}, "no tenant"},
		{"no expiry", hs, auth.Claims{Tenant: "casino-a"}, "no expiry"},
		{"no kid", auth.SigningKey{Alg: auth.HS256, Key: f.secretA}, ok, "no kid"},
		{"unknown alg", auth.SigningKey{ID: "k", Alg: "HS512", Key: f.secretA}, ok, `alg "HS512"`},
		{"alg none", auth.SigningKey{ID: "k", Alg: "none", Key: f.secretA}, ok, `alg "none"`},
		{"short secret", auth.SigningKey{ID: "k", Alg: auth.HS256, Key: []byte("short")}, ok, "secret of 5 bytes"},
		{"secret as a string", auth.SigningKey{ID: "k", Alg: auth.HS256, Key: string(f.secretA)}, ok, "HS256 key"},
		{"RSA key for EdDSA", auth.SigningKey{ID: "k", Alg: auth.EdDSA, Key: f.rsaKey}, ok, "EdDSA key"},
		{"public key for RS256", auth.SigningKey{ID: "k", Alg: auth.RS256, Key: &f.rsaKey.PublicKey}, ok, "RS256 key"},
		{"P-384 key for ES256", auth.SigningKey{ID: "k", Alg: auth.ES256, Key: p384}, ok, "ES256 key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			token, err := auth.Mint(tc.key, tc.claims)
			if !errors.Is(err, auth.ErrMint) || token != "" {
				t.Fatalf("Mint = %q, %v; want ErrMint", token, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("message %q lacks %q", err, tc.msg)
			}
		})
	}
}

func TestGenerateDemo(t *testing.T) {
	k1, key1, err := auth.GenerateDemo("demo")
	if err != nil {
		t.Fatal(err)
	}
	_, key2, _ := auth.GenerateDemo("demo")
	if bytes.Equal(key1.Key.([]byte), key2.Key.([]byte)) {
		t.Error("two demos share a secret")
	}
	admin, err := auth.Mint(key1, auth.Claims{Tenant: "demo", Roles: auth.RoleAdmin, Expiry: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	key1.Key.([]byte)[0] ^= 0xff // the keyring holds its own copy
	s, err := auth.NewVerifier(k1, auth.Options{}).Verify(admin)
	if err != nil || s.Tenant != "demo" || !s.Can(auth.RoleSubmit) {
		t.Errorf("Verify(demo admin token) = %+v, %v", s, err)
	}
	if l, ok := k1.Limits("demo"); !ok || l != (auth.Limits{}) {
		t.Errorf("Limits(demo) = %+v, %v; want zero, true", l, ok)
	}
	if _, _, err := auth.GenerateDemo("Demo.Tenant"); !errors.Is(err, auth.ErrMint) {
		t.Errorf("GenerateDemo(bad name) = %v", err)
	}
}

func TestSigningKey(t *testing.T) {
	f := loadFixture()
	tests := []struct {
		name string
		kid  string
		ok   bool
	}{
		{"HS256", "a-hs", true},
		{"public key", "a-rs", false},
		{"unknown", "zz", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := f.keys.SigningKey(tc.kid); ok != tc.ok {
				t.Errorf("SigningKey(%q) ok = %v, want %v", tc.kid, ok, tc.ok)
			}
		})
	}
	sk, _ := f.keys.SigningKey("a-hs")
	sk.Key.([]byte)[0] ^= 0xff
	if again, _ := f.keys.SigningKey("a-hs"); !bytes.Equal(again.Key.([]byte), f.secretA) {
		t.Error("changing a returned secret changed the keyring")
	}
}

// TestSigningKeyForTenant: the preferred HS256 kid of the tenant, else its
// lowest HS256 kid; never another tenant's; a tenant with only public keys
// or only a jwks_url gets ErrNoSecret saying which.
func TestSigningKeyForTenant(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	keys, err := auth.ParseKeys(fmt.Appendf(nil, `{"tenants":{
		"a":{"keys":[{"kid":"a2","alg":"HS256","secret":%q},{"kid":"a1","alg":"HS256","secret":%q}]},
		"b":{"keys":[{"kid":"b1","alg":"HS256","secret":%q}]},
		"p":{"keys":[{"kid":"p1","alg":"EdDSA","public_key":%q}]},
		"j":{"jwks_url":"https://idp.example/jwks.json"}}}`,
		b64(bytes.Repeat([]byte{'2'}, 32)), b64(bytes.Repeat([]byte{'1'}, 32)), b64(bytes.Repeat([]byte{'b'}, 32)), pemOf(pub)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ tenant, prefer, want, why string }{
		{"a", "a2", "a2", ""},
		{"a", "b1", "a1", ""}, // another tenant's kid is never used
		{"a", "", "a1", ""},
		{"p", "p1", "", "only public keys"},
		{"j", "", "", "jwks_url"},
	} {
		sk, err := keys.SigningKeyFor(tc.tenant, tc.prefer)
		switch {
		case tc.why == "" && (err != nil || sk.ID != tc.want):
			t.Errorf("%s/%s: %v %v, want %s", tc.tenant, tc.prefer, sk, err, tc.want)
		case tc.why != "" && (!errors.Is(err, auth.ErrNoSecret) || !strings.Contains(err.Error(), tc.why)):
			t.Errorf("%s: %v, want ErrNoSecret saying %q", tc.tenant, err, tc.why)
		}
	}
}
