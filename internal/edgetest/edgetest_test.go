package edgetest

import (
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
)

// A token Mint signs verifies against KeysA's key file as casino-a's, with
// the claims given; casino-b, absent from it, has no key to sign with.
func TestMint(t *testing.T) {
	keys := KeysA(t, `"boards":1`, "")
	tok := Mint(t, keys, "a", auth.Claims{Subject: "p1", Roles: auth.RoleRead, Boards: []string{"w*"}, Expiry: time.Now().Add(time.Minute)})
	c, err := auth.NewVerifier(keys, auth.Options{}).Verify(tok)
	if err != nil || c.Tenant != "casino-a" || c.Subject != "p1" || c.Roles != auth.RoleRead || len(c.Boards) != 1 {
		t.Fatalf("claims %+v, %v", c, err)
	}
	if _, ok := keys.SigningKey("b1"); ok {
		t.Fatal("casino-b has a key in KeysA without more")
	}
}
