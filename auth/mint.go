package auth

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/rankwire/rankwire/internal/names"
)

// DemoKid is the kid of the key GenerateDemo makes.
const DemoKid = "demo"

// SigningKey is what Mint signs with.
type SigningKey struct {
	ID  string // the kid written to the header
	Alg string // HS256, RS256, ES256 or EdDSA
	// Key is a []byte secret of at least MinSecretLen bytes for HS256, or a
	// *rsa.PrivateKey, *ecdsa.PrivateKey (P-256) or ed25519.PrivateKey.
	Key any
}

// String describes k without its key material, so a logged SigningKey leaks nothing.
func (k SigningKey) String() string {
	return fmt.Sprintf("%s signing key %q", k.Alg, k.ID)
}

// Claims are what Mint writes into a token. Mint always writes aud "rankwire".
type Claims struct {
	Tenant  string // tnt; required
	Subject string // sub; empty omits it
	Roles   Role   // roles, written as names
	// Boards are glob patterns. Nil omits the claim (every board); an empty,
	// non-nil slice is written as [] (no board).
	Boards    []string
	Expiry    time.Time // exp; required
	NotBefore time.Time // nbf; zero omits it
	IssuedAt  time.Time // iat; zero omits it
}

var signingMethods = map[string]jwt.SigningMethod{
	HS256: jwt.SigningMethodHS256,
	RS256: jwt.SigningMethodRS256,
	ES256: jwt.SigningMethodES256,
	EdDSA: jwt.SigningMethodEdDSA,
}

// Mint signs a token carrying c with key. It is for the demo mode and tests;
// operators mint their own tokens. Errors wrap ErrMint. Cost: one signature
// (milliseconds for RS256). Safe for concurrent use.
func Mint(key SigningKey, c Claims) (string, error) {
	method, err := checkMint(key, c)
	if err != nil {
		return "", err
	}
	t := jwt.NewWithClaims(method, c.wire())
	t.Header["kid"] = key.ID
	s, err := t.SignedString(key.Key)
	if err != nil {
		return "", fmt.Errorf("%w: %s key %q: %w", ErrMint, key.Alg, key.ID, err)
	}
	return s, nil
}

// checkMint refuses what Verify would refuse anyway, and short secrets.
func checkMint(key SigningKey, c Claims) (jwt.SigningMethod, error) {
	method, ok := signingMethods[key.Alg]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: alg %q is not one of HS256, RS256, ES256, EdDSA", ErrMint, key.Alg)
	case key.ID == "":
		return nil, fmt.Errorf("%w: no kid", ErrMint)
	case c.Tenant == "":
		return nil, fmt.Errorf("%w: no tenant", ErrMint)
	case c.Expiry.IsZero():
		return nil, fmt.Errorf("%w: no expiry", ErrMint)
	}
	if secret, ok := key.Key.([]byte); ok && len(secret) < MinSecretLen {
		return nil, fmt.Errorf("%w: secret of %d bytes, need at least %d", ErrMint, len(secret), MinSecretLen)
	}
	return method, nil
}

// wire converts c to the JWT payload.
func (c Claims) wire() *claims {
	w := &claims{Tenant: c.Tenant, Roles: c.Roles.names(), Boards: c.Boards}
	w.Subject = c.Subject
	w.Audience = jwt.ClaimStrings{Audience}
	w.ExpiresAt = jwt.NewNumericDate(c.Expiry)
	w.NotBefore = numericDate(c.NotBefore)
	w.IssuedAt = numericDate(c.IssuedAt)
	return w
}

func numericDate(t time.Time) *jwt.NumericDate {
	if t.IsZero() {
		return nil
	}
	return jwt.NewNumericDate(t)
}

// GenerateDemo makes a keyring with one tenant and one HS256 key (kid DemoKid)
// with a fresh random 32-byte secret, and returns the key to Mint with. The
// gateway's demo mode mints an admin and a read token with it. The tenant's
// Limits are zero (gateway defaults). It fails only for a tenant name outside
// the board-name rule.
func GenerateDemo(tenant string) (*Keyring, SigningKey, error) {
	if !names.Valid(tenant) {
		return nil, SigningKey{}, fmt.Errorf("%w: tenant %q: name must match %s", ErrMint, tenant, names.Pattern)
	}
	secret := make([]byte, MinSecretLen)
	rand.Read(secret) // never fails; crashes the program if the OS has no randomness
	k := &Keyring{
		keys:   map[string]Key{DemoKid: {ID: DemoKid, Alg: HS256, Tenant: tenant, verify: bytes.Clone(secret)}},
		limits: map[string]Limits{tenant: {}},
	}
	return k, SigningKey{ID: DemoKid, Alg: HS256, Key: secret}, nil
}
