package auth_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/rankwire/rankwire/auth"
)

func TestVerifyRefuses(t *testing.T) {
	f := loadFixture()
	hs := func(c jwt.MapClaims) string { return sign(t, jwt.SigningMethodHS256, "a-hs", f.secretA, c) }
	valid := hs(baseClaims())
	head, rest, _ := strings.Cut(valid, ".")
	payload, sig, _ := strings.Cut(rest, ".")
	tests := []struct {
		name  string
		token string
		want  error
	}{
		{"expired", hs(with(func(c jwt.MapClaims) { c["exp"] = now.Add(-31 * time.Second).Unix() })), auth.ErrExpired},
		{"long expired", hs(with(func(c jwt.MapClaims) { c["exp"] = now.Add(-48 * time.Hour).Unix() })), auth.ErrExpired},
		{"nbf beyond leeway", hs(with(func(c jwt.MapClaims) { c["nbf"] = now.Add(31 * time.Second).Unix() })), auth.ErrNotYetValid},
		{"iat in the future beyond leeway", hs(with(func(c jwt.MapClaims) { c["iat"] = now.Add(31 * time.Second).Unix() })), auth.ErrNotYetValid},
		{"wrong aud", hs(with(func(c jwt.MapClaims) { c["aud"] = "someone-else" })), auth.ErrAudience},
		{"wrong aud list", hs(with(func(c jwt.MapClaims) { c["aud"] = []string{"a", "b"} })), auth.ErrAudience},
		{"missing aud", hs(with(func(c jwt.MapClaims) { delete(c, "aud") })), auth.ErrAudience},
		{"empty aud", hs(with(func(c jwt.MapClaims) { c["aud"] = "" })), auth.ErrAudience},
		{"missing tnt", hs(with(func(c jwt.MapClaims) { delete(c, "tnt") })), auth.ErrMissingClaim},
		{"empty tnt", hs(with(func(c jwt.MapClaims) { c["tnt"] = "" })), auth.ErrMissingClaim},
		{"missing exp", hs(with(func(c jwt.MapClaims) { delete(c, "exp") })), auth.ErrMissingClaim},
		{"exp not a number", hs(with(func(c jwt.MapClaims) { c["exp"] = "tomorrow" })), auth.ErrMalformed},
		{"roles not a list", hs(with(func(c jwt.MapClaims) { c["roles"] = "admin" })), auth.ErrMalformed},
		{"unknown kid", sign(t, jwt.SigningMethodHS256, "z-9", f.secretA, baseClaims()), auth.ErrUnknownKey},
		{"missing kid", sign(t, jwt.SigningMethodHS256, "", f.secretA, baseClaims()), auth.ErrUnknownKey},
		{"alg none", sign(t, jwt.SigningMethodNone, "a-hs", jwt.UnsafeAllowNoneSignatureType, baseClaims()), auth.ErrAlgorithm},
		{"alg none without kid", sign(t, jwt.SigningMethodNone, "", jwt.UnsafeAllowNoneSignatureType, baseClaims()), auth.ErrUnknownKey},
		{"alg mismatch: HS256 with the RSA public key PEM as secret", sign(t, jwt.SigningMethodHS256, "a-rs", []byte(f.rsaPEM), baseClaims()), auth.ErrAlgorithm},
		{"alg mismatch: HS256 with the Ed25519 public key PEM as secret", sign(t, jwt.SigningMethodHS256, "a-ed", []byte(f.edPEM), baseClaims()), auth.ErrAlgorithm},
		{"alg mismatch: RS256 token for ES256 key", sign(t, jwt.SigningMethodRS256, "a-es", f.rsaKey, baseClaims()), auth.ErrAlgorithm},
		{"alg mismatch: HS512 for HS256 key", sign(t, jwt.SigningMethodHS512, "a-hs", f.secretA, baseClaims()), auth.ErrAlgorithm},
		{"tenant B's key claiming tenant A", sign(t, jwt.SigningMethodHS256, "b-hs", f.secretB, baseClaims()), auth.ErrWrongTenant},
		{"tenant B's secret under tenant A's kid", sign(t, jwt.SigningMethodHS256, "a-hs", f.secretB, baseClaims()), auth.ErrBadSignature},
		{"tampered signature", head + "." + payload + "." + flip(sig, 10), auth.ErrBadSignature},
		{"tampered payload", head + "." + segment(`{"tnt":"casino-a","roles":["admin"],"aud":"rankwire","exp":1999999999}`) + "." + sig, auth.ErrBadSignature},
		{"signature removed", head + "." + payload + ".", auth.ErrBadSignature},
		{"signature not base64", head + "." + payload + ".*!*", auth.ErrMalformed},
		{"empty", "", auth.ErrNoToken},
		{"garbage", "garbage", auth.ErrMalformed},
		{"three garbage parts", "a.b.c", auth.ErrMalformed},
		{"dots only", "..", auth.ErrMalformed},
		{"two parts", head + "." + payload, auth.ErrMalformed},
		{"four parts", valid + ".x", auth.ErrMalformed},
		{"header not JSON", segment("hello") + "." + payload + "." + sig, auth.ErrMalformed},
		{"header a JSON list", segment("[]") + "." + payload + "." + sig, auth.ErrMalformed},
		{"kid a number", segment(`{"alg":"HS256","kid":7}`) + "." + payload + "." + sig, auth.ErrMalformed},
		{"payload not base64", head + ".%%%." + sig, auth.ErrMalformed},
		{"payload not JSON", head + "." + segment("{") + "." + sig, auth.ErrMalformed},
		{"bearer prefix left on", "Bearer " + valid, auth.ErrMalformed},
		{"too long", head + "." + strings.Repeat("A", auth.MaxTokenLen) + "." + sig, auth.ErrMalformed},
	}
	v := verifier(f)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := v.Verify(tc.token)
			if !errors.Is(err, tc.want) || !errors.Is(err, auth.ErrUnauthorized) {
				t.Fatalf("Verify = %+v, %v; want %v (unauthorized)", s, err, tc.want)
			}
			if errors.Is(err, auth.ErrForbidden) {
				t.Errorf("%v is also forbidden", err)
			}
			if s.Tenant != "" {
				t.Errorf("refused token gave a scope: %+v", s)
			}
			noTokenIn(t, err, tc.token)
		})
	}
}

// noTokenIn fails if err's message quotes token or any of its parts.
func noTokenIn(t *testing.T, err error, token string) {
	t.Helper()
	for _, part := range append(strings.Split(token, "."), token) {
		if len(part) >= 8 && strings.Contains(err.Error(), part) {
			t.Errorf("error %q quotes the token", err)
		}
	}
}

// flip replaces the base64url character at i with another one.
func flip(s string, i int) string {
	c := byte('A')
	if s[i] == 'A' {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}

func TestVerifyAccepts(t *testing.T) {
	f := loadFixture()
	hs := func(c jwt.MapClaims) string { return sign(t, jwt.SigningMethodHS256, "a-hs", f.secretA, c) }
	tests := []struct {
		name  string
		token string
		want  auth.Scope
	}{
		{"HS256", hs(baseClaims()), readP42()},
		{"RS256", sign(t, jwt.SigningMethodRS256, "a-rs", f.rsaKey, baseClaims()), readP42()},
		{"ES256", sign(t, jwt.SigningMethodES256, "a-es", f.ecKey, baseClaims()), readP42()},
		{"EdDSA", sign(t, jwt.SigningMethodEdDSA, "a-ed", f.edKey, baseClaims()), readP42()},
		{"tenant B", sign(t, jwt.SigningMethodHS256, "b-hs", f.secretB, with(func(c jwt.MapClaims) { c["tnt"] = "casino-b" })),
			auth.Scope{Tenant: "casino-b", Subject: "p42", Roles: auth.RoleRead, Expiry: now.Add(time.Hour)}},
		{"exp within leeway", hs(with(func(c jwt.MapClaims) { c["exp"] = now.Add(-29 * time.Second).Unix() })),
			auth.Scope{Tenant: "casino-a", Subject: "p42", Roles: auth.RoleRead, Expiry: now.Add(-29 * time.Second)}},
		{"nbf within leeway", hs(with(func(c jwt.MapClaims) { c["nbf"] = now.Add(29 * time.Second).Unix() })), readP42()},
		{"iat within leeway", hs(with(func(c jwt.MapClaims) { c["iat"] = now.Add(29 * time.Second).Unix() })), readP42()},
		{"nbf and iat absent", hs(with(func(c jwt.MapClaims) { delete(c, "iat") })), readP42()},
		{"aud list containing rankwire", hs(with(func(c jwt.MapClaims) { c["aud"] = []string{"other", "rankwire"} })), readP42()},
		{"no sub", hs(with(func(c jwt.MapClaims) { delete(c, "sub") })),
			auth.Scope{Tenant: "casino-a", Roles: auth.RoleRead, Expiry: now.Add(time.Hour)}},
		{"unknown roles ignored", hs(with(func(c jwt.MapClaims) { c["roles"] = []string{"read", "superuser", "ADMIN"} })), readP42()},
		{"no roles", hs(with(func(c jwt.MapClaims) { delete(c, "roles") })),
			auth.Scope{Tenant: "casino-a", Subject: "p42", Expiry: now.Add(time.Hour)}},
		{"all roles", hs(with(func(c jwt.MapClaims) { c["roles"] = []string{"admin", "submit", "read"} })),
			auth.Scope{Tenant: "casino-a", Subject: "p42", Roles: auth.RoleRead | auth.RoleSubmit | auth.RoleAdmin, Expiry: now.Add(time.Hour)}},
		{"boards", hs(with(func(c jwt.MapClaims) { c["boards"] = []string{"slots-*", "weekly"} })),
			auth.Scope{Tenant: "casino-a", Subject: "p42", Roles: auth.RoleRead, Boards: []string{"slots-*", "weekly"}, Expiry: now.Add(time.Hour)}},
		{"boards null means all", hs(with(func(c jwt.MapClaims) { c["boards"] = nil })), readP42()},
		{"boards empty means none", hs(with(func(c jwt.MapClaims) { c["boards"] = []string{} })),
			auth.Scope{Tenant: "casino-a", Subject: "p42", Roles: auth.RoleRead, Boards: []string{}, Expiry: now.Add(time.Hour)}},
	}
	v := verifier(f)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := v.Verify(tc.token)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !sameScope(got, tc.want) {
				t.Errorf("Verify = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func readP42() auth.Scope {
	return auth.Scope{Tenant: "casino-a", Subject: "p42", Roles: auth.RoleRead, Expiry: now.Add(time.Hour)}
}

// sameScope compares scopes, telling a nil Boards (all) from an empty one (none).
func sameScope(a, b auth.Scope) bool {
	return a.Tenant == b.Tenant && a.Subject == b.Subject && a.Roles == b.Roles &&
		a.Expiry.Equal(b.Expiry) && (a.Boards == nil) == (b.Boards == nil) && slices.Equal(a.Boards, b.Boards)
}

func TestVerifyClockMoves(t *testing.T) {
	f := loadFixture()
	var c clock
	v := auth.NewVerifier(f.keys, auth.Options{Now: c.Now})
	token := sign(t, jwt.SigningMethodEdDSA, "a-ed", f.edKey, with(func(m jwt.MapClaims) {
		m["nbf"] = now.Unix()
	}))
	steps := []struct {
		name string
		at   time.Time
		want error
	}{
		{"before nbf, past leeway", now.Add(-31 * time.Second), auth.ErrNotYetValid},
		{"before nbf, within leeway", now.Add(-29 * time.Second), nil},
		{"valid", now.Add(30 * time.Minute), nil},
		{"after exp, within leeway", now.Add(time.Hour + 29*time.Second), nil},
		{"after exp, past leeway", now.Add(time.Hour + 31*time.Second), auth.ErrExpired},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			c.Set(st.at)
			if _, err := v.Verify(token); !errors.Is(err, st.want) {
				t.Fatalf("Verify at %v = %v, want %v", st.at, err, st.want)
			}
		})
	}
}

func TestVerifyConcurrent(t *testing.T) {
	f := loadFixture()
	v := verifier(f)
	tokens := []string{
		sign(t, jwt.SigningMethodHS256, "a-hs", f.secretA, baseClaims()),
		sign(t, jwt.SigningMethodRS256, "a-rs", f.rsaKey, baseClaims()),
		sign(t, jwt.SigningMethodES256, "a-es", f.ecKey, baseClaims()),
		sign(t, jwt.SigningMethodEdDSA, "a-ed", f.edKey, baseClaims()),
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				s, err := v.Verify(tokens[(g+i)%len(tokens)])
				if err != nil || !s.Can(auth.RoleRead) {
					t.Errorf("Verify = %+v, %v", s, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestNewVerifierNilKeyringPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewVerifier(nil) did not panic")
		}
	}()
	auth.NewVerifier(nil, auth.Options{})
}
