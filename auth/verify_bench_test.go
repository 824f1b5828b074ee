package auth_test

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/rankwire/rankwire/auth"
)

func BenchmarkVerify(b *testing.B) {
	f := loadFixture()
	// The signature's cost: no cache of verified tokens.
	v := auth.NewVerifier(f.keys, auth.Options{Now: func() time.Time { return now }, CacheSize: -1})
	algs := []struct {
		name  string
		token string
	}{
		{"alg=HS256", sign(b, jwt.SigningMethodHS256, "a-hs", f.secretA, baseClaims())},
		{"alg=RS256", sign(b, jwt.SigningMethodRS256, "a-rs", f.rsaKey, baseClaims())},
		{"alg=ES256", sign(b, jwt.SigningMethodES256, "a-es", f.ecKey, baseClaims())},
		{"alg=EdDSA", sign(b, jwt.SigningMethodEdDSA, "a-ed", f.edKey, baseClaims())},
	}
	for _, a := range algs {
		b.Run(a.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Verify(a.token); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCanBoard(b *testing.B) {
	s := auth.Scope{Boards: []string{"poker-*", "*-weekly", "slots-*-2030"}}
	b.ReportAllocs()
	for b.Loop() {
		if !s.CanBoard("slots-daily-2030") {
			b.Fatal("no match")
		}
	}
}
