package auth_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/rankwire/rankwire/auth"
)

// now is the tests' fixed clock.
var now = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// fixture is a key file with two tenants and one key of every algorithm,
// generated once per test binary (RSA key generation is slow under -race).
type fixture struct {
	keyFile          []byte
	keys             *auth.Keyring
	secretA, secretB []byte
	rsaKey           *rsa.PrivateKey
	rsaPEM           string
	ecKey            *ecdsa.PrivateKey
	ecPEM            string
	edKey            ed25519.PrivateKey
	edPEM            string
}

var loadFixture = sync.OnceValue(func() *fixture {
	f := &fixture{secretA: randomBytes(32), secretB: randomBytes(40)}
	f.rsaKey = must(rsa.GenerateKey(rand.Reader, 2048))
	f.ecKey = must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	_, f.edKey = must2(ed25519.GenerateKey(rand.Reader))
	f.rsaPEM = pemOf(f.rsaKey.Public())
	f.ecPEM = pemOf(f.ecKey.Public())
	f.edPEM = pemOf(f.edKey.Public())
	f.keyFile = must(json.Marshal(keyFileOf(tenants{
		"casino-a": {
			{"kid": "a-hs", "alg": "HS256", "secret": b64(f.secretA)},
			{"kid": "a-rs", "alg": "RS256", "public_key": f.rsaPEM},
			{"kid": "a-es", "alg": "ES256", "public_key": f.ecPEM},
			{"kid": "a-ed", "alg": "EdDSA", "public_key": f.edPEM},
		},
		"casino-b": {{"kid": "b-hs", "alg": "HS256", "secret": b64(f.secretB)}},
	})))
	f.keys = must(auth.ParseKeys(f.keyFile))
	return f
})

// tenants maps a tenant to its key entries.
type tenants map[string][]map[string]string

func keyFileOf(ts tenants) map[string]any {
	out := map[string]any{}
	for name, keys := range ts {
		out[name] = map[string]any{"keys": keys}
	}
	return map[string]any{"tenants": out}
}

// verifier returns a Verifier of the fixture's keys at the fixed clock.
func verifier(f *fixture) *auth.Verifier {
	return auth.NewVerifier(f.keys, auth.Options{Now: func() time.Time { return now }})
}

// baseClaims are valid claims for tenant casino-a at the fixed clock.
func baseClaims() jwt.MapClaims {
	return jwt.MapClaims{
		"tnt": "casino-a", "sub": "p42", "roles": []string{"read"}, "aud": "rankwire",
		"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(),
	}
}

// with returns baseClaims changed by edit.
func with(edit func(jwt.MapClaims)) jwt.MapClaims {
	c := baseClaims()
	edit(c)
	return c
}

// sign signs c with jwt directly, independent of auth.Mint. An empty kid
// leaves the header without one.
func sign(tb testing.TB, method jwt.SigningMethod, kid string, key any, c jwt.MapClaims) string {
	tb.Helper()
	t := jwt.NewWithClaims(method, c)
	if kid != "" {
		t.Header["kid"] = kid
	}
	s, err := t.SignedString(key)
	if err != nil {
		tb.Fatalf("sign: %v", err)
	}
	return s
}

// segment base64url-encodes s, as a JWT part.
func segment(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func pemOf(pub any) string {
	der := must(x509.MarshalPKIXPublicKey(pub))
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}

// clock is a settable time source, safe for concurrent use.
type clock struct{ unix atomic.Int64 }

func (c *clock) Now() time.Time  { return time.Unix(c.unix.Load(), 0) }
func (c *clock) Set(t time.Time) { c.unix.Store(t.Unix()) }
