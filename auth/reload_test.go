package auth_test

import (
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/rankwire/rankwire/auth"
)

// ring parses a key file of ts, failing the test on error.
func ring(t *testing.T, ts tenants) *auth.Keyring {
	t.Helper()
	k, err := auth.ParseKeys(must(json.Marshal(keyFileOf(ts))))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A removed kid is refused at once, even for a token the cache holds; a
// kid added by the swap verifies at once, and not before.
func TestSwapRemovesAndAdds(t *testing.T) {
	f := loadFixture()
	v := verifier(f)
	oldB := sign(t, jwt.SigningMethodHS256, "b-hs", f.secretB, with(func(c jwt.MapClaims) { c["tnt"] = "casino-b" }))
	secretC := randomBytes(32)
	newC := sign(t, jwt.SigningMethodHS256, "c-hs", secretC, with(func(c jwt.MapClaims) { c["tnt"] = "casino-c" }))
	if sc, err := v.Verify(oldB); err != nil || sc.Kid != "b-hs" { // now cached
		t.Fatalf("before the swap: %+v, %v; want kid b-hs", sc, err)
	}
	if _, err := v.Verify(newC); !errors.Is(err, auth.ErrUnknownKey) {
		t.Fatalf("new tenant before the swap: %v, want ErrUnknownKey", err)
	}
	next := ring(t, tenants{
		"casino-a": {{"kid": "a-hs", "alg": "HS256", "secret": b64(f.secretA)}},
		"casino-c": {{"kid": "c-hs", "alg": "HS256", "secret": b64(secretC)}},
	})
	old, err := v.Swap(next)
	if err != nil || old != f.keys || v.Keyring() != next {
		t.Fatalf("Swap = %p, %v; want the old keyring %p and Keyring() the new", old, err, f.keys)
	}
	if _, err := v.Verify(oldB); !errors.Is(err, auth.ErrUnknownKey) {
		t.Errorf("removed kid after the swap (cached before): %v, want ErrUnknownKey", err)
	}
	if sc, err := v.Verify(newC); err != nil || sc.Tenant != "casino-c" || sc.Kid != "c-hs" {
		t.Errorf("added tenant after the swap: %+v, %v", sc, err)
	}
	kept := sign(t, jwt.SigningMethodHS256, "a-hs", f.secretA, baseClaims())
	if _, err := v.Verify(kept); err != nil {
		t.Errorf("kept kid after the swap: %v", err)
	}
}

// A kid kept with a new secret refuses tokens of the old secret, even
// cached ones: the attacker who stole the old secret is out.
func TestSwapReplacedSecret(t *testing.T) {
	f := loadFixture()
	v := verifier(f)
	stolen := sign(t, jwt.SigningMethodHS256, "a-hs", f.secretA, baseClaims())
	if _, err := v.Verify(stolen); err != nil {
		t.Fatal(err)
	}
	fresh := randomBytes(32)
	if _, err := v.Swap(ring(t, tenants{"casino-a": {{"kid": "a-hs", "alg": "HS256", "secret": b64(fresh)}}})); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(stolen); !errors.Is(err, auth.ErrBadSignature) {
		t.Errorf("old secret after the swap: %v, want ErrBadSignature", err)
	}
	if _, err := v.Verify(sign(t, jwt.SigningMethodHS256, "a-hs", fresh, baseClaims())); err != nil {
		t.Errorf("new secret after the swap: %v", err)
	}
}

func TestSwapNilKeepsKeys(t *testing.T) {
	f := loadFixture()
	v := verifier(f)
	if _, err := v.Swap(nil); !errors.Is(err, auth.ErrKeyFile) {
		t.Fatalf("Swap(nil) = %v, want ErrKeyFile", err)
	}
	if v.Keyring() != f.keys {
		t.Error("Swap(nil) replaced the keyring")
	}
}

// Verifications running while swaps run (under -race): a kid present in
// every keyring always verifies, one present in none never does.
func TestSwapConcurrent(t *testing.T) {
	f := loadFixture()
	v := verifier(f)
	small := ring(t, tenants{"casino-a": {{"kid": "a-hs", "alg": "HS256", "secret": b64(f.secretA)}}})
	kept := sign(t, jwt.SigningMethodHS256, "a-hs", f.secretA, baseClaims())
	never := sign(t, jwt.SigningMethodHS256, "x", f.secretA, baseClaims())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 500 {
				if _, err := v.Verify(kept); err != nil {
					t.Errorf("kept kid: %v", err)
					return
				}
				if _, err := v.Verify(never); err == nil {
					t.Error("unknown kid verified")
					return
				}
			}
		})
	}
	for i := range 200 {
		_, _ = v.Swap([]*auth.Keyring{small, f.keys}[i%2])
	}
	wg.Wait()
}

func TestCompareKeys(t *testing.T) {
	f := loadFixture()
	next := ring(t, tenants{
		"casino-a": {
			{"kid": "a-hs", "alg": "HS256", "secret": b64(randomBytes(32))}, // same kid, new secret
			{"kid": "a-rs", "alg": "RS256", "public_key": f.rsaPEM},         // unchanged
			{"kid": "a-new", "alg": "EdDSA", "public_key": f.edPEM},         // moved to a new kid
		},
		"casino-c": {{"kid": "c-hs", "alg": "HS256", "secret": b64(randomBytes(32))}},
	})
	c := auth.CompareKeys(f.keys, next)
	check := func(name string, got, want []string) {
		if !slices.Equal(got, want) {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	check("AddedTenants", c.AddedTenants, []string{"casino-c"})
	check("RemovedTenants", c.RemovedTenants, []string{"casino-b"})
	check("AddedKeys", c.AddedKeys, []string{"a-hs", "a-new", "c-hs"})
	check("RemovedKeys", c.RemovedKeys, []string{"a-ed", "a-es", "a-hs", "b-hs"})
	if !c.Changed() || auth.CompareKeys(f.keys, f.keys).Changed() {
		t.Error("Changed is wrong")
	}
	if got := auth.CompareKeys(nil, f.keys); len(got.AddedKeys) != 5 || len(got.RemovedKeys) != 0 {
		t.Errorf("CompareKeys(nil, keys) = %+v", got)
	}
	if !next.Holds("c-hs", "casino-c") || next.Holds("c-hs", "casino-a") || next.Holds("b-hs", "casino-b") {
		t.Error("Holds is wrong")
	}
}
