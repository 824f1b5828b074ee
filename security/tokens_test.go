package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// claims are a token's claims as a map, so that a test can leave any out
// or give it any type.
type claims map[string]any

// base returns valid claims of tenant with roles, an hour to live.
func base(tenant string, roles ...string) claims {
	return claims{"tnt": tenant, "roles": roles, "aud": "rankwire", "exp": time.Now().Add(time.Hour).Unix()}
}

// with returns a copy of c with the given claims set; a nil value removes one.
func (c claims) with(kv ...any) claims {
	out := claims{}
	for k, v := range c {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// hs signs c with HS256 under kid and secret.
func hs(t testing.TB, kid string, secret []byte, c claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims(c))
	tok.Header["kid"] = kid
	s, err := tok.SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	return minted(s)
}

var (
	mintedMu sync.Mutex // guards mintedTokens
	// mintedTokens is every token the suite made, for the log search.
	mintedTokens []string
)

// minted records tok for TestMain's search of the gateway's log.
func minted(tok string) string {
	mintedMu.Lock()
	defer mintedMu.Unlock()
	mintedTokens = append(mintedTokens, tok)
	return tok
}

// tokensInLog returns the tokens of which log holds a part: a signature,
// or a header and claims, of 16 characters or more.
func tokensInLog(log string) []string {
	mintedMu.Lock()
	defer mintedMu.Unlock()
	var found []string
	for _, tok := range mintedTokens {
		for _, part := range strings.Split(tok, ".") {
			if len(part) >= 16 && strings.Contains(log, part) {
				found = append(found, tok)
				break
			}
		}
	}
	return found
}

// tokA and tokB are valid HS256 tokens of tenants A and B.
func tokA(t testing.TB, c claims) string { return hs(t, "a1", gw.secretA, c) }
func tokB(t testing.TB, c claims) string { return hs(t, "b1", gw.secretB, c) }

// rs signs c with tenant A's real RS256 key under kid.
func rs(t testing.TB, kid string, c claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims(c))
	tok.Header["kid"] = kid
	s, err := tok.SignedString(gw.rsaA)
	if err != nil {
		t.Fatal(err)
	}
	return minted(s)
}

// unsigned builds a token with header h and claims c and an empty signature
// (alg none and friends), by hand: no library signs those.
func unsigned(h map[string]any, c claims) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return minted(enc(h) + "." + enc(c) + ".")
}

// seed creates both tenants' boards, members and aliases. Tenant B's names
// all carry bMarkers; both tenants have a board named poker-final.
func seed(g *gateway) (err error) {
	t := &seedT{}
	defer func() {
		if r := recover(); r != nil {
			if r != t {
				panic(r)
			}
			err = t.err
		}
	}()
	adminA, adminB := tokA(t, base(tenantA, "admin")), tokB(t, base(tenantB, "admin"))
	steps := []struct{ method, path, token, body string }{
		{"PUT", "/v1/boards/poker-final", adminA, `{}`},
		{"PUT", "/v1/boards/slots-1", adminA, `{}`},
		{"POST", "/v1/boards/poker-final/scores", adminA, `{"scores":[{"member":"champion","score":1000000},{"member":"runner-up","score":500000}]}`},
		{"POST", "/v1/boards/slots-1/scores", adminA, `{"scores":[{"member":"s-one","score":10},{"member":"s-two","score":20}]}`},
		{"PUT", "/v1/boards/zebra-vault", adminB, `{}`},
		{"PUT", "/v1/boards/poker-final", adminB, `{}`},
		{"POST", "/v1/boards/zebra-vault/scores", adminB, `{"member":"zq-whale-9931","score":7654321.5}`},
		{"POST", "/v1/boards/poker-final/scores", adminB, `{"scores":[{"member":"zq-whale-9931","score":7654321.5},{"member":"zq-shark-4417","score":7654321}]}`},
		{"POST", "/v1/identities", adminB, `{"member":"zq-whale-9931","aliases":["email:zq@b.example","champion-b"]}`},
	}
	for _, s := range steps {
		if r := do(t, s.method, s.path, s.token, s.body); r.status != 200 {
			return fmt.Errorf("%s %s: %d %s", s.method, s.path, r.status, r.body)
		}
	}
	return t.err
}

// seedT lets the test helpers run from TestMain, where there is no *testing.T.
type seedT struct {
	testing.TB
	err error
}

func (s *seedT) Helper()                   {}
func (s *seedT) Fatal(args ...any)         { s.fail(fmt.Sprint(args...)) }
func (s *seedT) Fatalf(f string, a ...any) { s.fail(fmt.Sprintf(f, a...)) }
func (s *seedT) Errorf(f string, a ...any) { s.fail(fmt.Sprintf(f, a...)) }
func (s *seedT) fail(msg string) {
	if s.err == nil {
		s.err = fmt.Errorf("%s", strings.TrimSpace(msg))
	}
	panic(s) // stop the step, as Fatal would; seed recovers it
}

var (
	attackerOnce sync.Once
	attackerRSA  *rsa.PrivateKey   // a key pair of the attacker's own
	attackerEC   *ecdsa.PrivateKey // likewise, P-256
)

// attackerKeys generates the attacker's keys once for the suite.
func attackerKeys(t testing.TB) (*rsa.PrivateKey, *ecdsa.PrivateKey) {
	attackerOnce.Do(func() {
		attackerRSA, _ = rsa.GenerateKey(rand.Reader, 2048)
		attackerEC, _ = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	})
	if attackerRSA == nil || attackerEC == nil {
		t.Fatal("generating the attacker's keys failed")
	}
	return attackerRSA, attackerEC
}

// signedBy signs c with method and key under header fields h (kid and
// the like), as an attacker with a key of its own would.
func signedBy(t testing.TB, method jwt.SigningMethod, key any, h map[string]any, c claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, jwt.MapClaims(c))
	for k, v := range h {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return minted(s)
}

// jwkOf is pub as a JSON Web Key, for a header that embeds it.
func jwkOf(pub *rsa.PublicKey) map[string]any {
	return map[string]any{"kty": "RSA", "kid": "a2",
		"n": base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes())}
}
