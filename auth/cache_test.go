package auth_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/rankwire/rankwire/auth"
)

// TestCacheKeepsExpiry: a cached token is refused once it expires, exactly
// as an uncached one, and a refused token is never cached.
func TestCacheKeepsExpiry(t *testing.T) {
	f := loadFixture()
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	nowFn := func() time.Time { return time.Unix(0, clock.Load()) }
	for _, size := range []int{0, -1, 1} {
		v := auth.NewVerifier(f.keys, auth.Options{Now: nowFn, CacheSize: size})
		clock.Store(now.UnixNano())
		tok := sign(t, jwt.SigningMethodHS256, "a-hs", f.secretA, baseClaims())
		for range 3 {
			if _, err := v.Verify(tok); err != nil {
				t.Fatalf("size %d: valid token refused: %v", size, err)
			}
		}
		clock.Store(now.Add(time.Hour + auth.Leeway + time.Second).UnixNano())
		if _, err := v.Verify(tok); !errors.Is(err, auth.ErrExpired) {
			t.Errorf("size %d: expired cached token: %v, want ErrExpired", size, err)
		}
		bad := tok[:len(tok)-2] + "xx"
		for range 2 {
			if _, err := v.Verify(bad); !errors.Is(err, auth.ErrUnauthorized) {
				t.Errorf("size %d: tampered token: %v", size, err)
			}
		}
	}
}

// TestCacheFullStaysCorrect: past its size the cache forgets and verifies
// again; every answer stays right.
func TestCacheFullStaysCorrect(t *testing.T) {
	f := loadFixture()
	v := auth.NewVerifier(f.keys, auth.Options{Now: func() time.Time { return now }, CacheSize: 2})
	for i := range 10 {
		sub := string(rune('a' + i))
		tok := sign(t, jwt.SigningMethodHS256, "a-hs", f.secretA, with(func(c jwt.MapClaims) { c["sub"] = sub }))
		sc, err := v.Verify(tok)
		if err != nil || sc.Subject != sub {
			t.Fatalf("token %d: %+v %v", i, sc, err)
		}
	}
}

func BenchmarkVerifyCached(b *testing.B) {
	f := loadFixture()
	v := auth.NewVerifier(f.keys, auth.Options{Now: func() time.Time { return now }})
	tok := sign(b, jwt.SigningMethodHS256, "a-hs", f.secretA, baseClaims())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(tok); err != nil {
			b.Fatal(err)
		}
	}
}
