package auth_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/rankwire/rankwire/auth"
)

// A gateway parses the key file once, builds a Verifier and checks every
// request's token with it.
func ExampleVerifier_Verify() {
	keys, err := auth.ParseKeys([]byte(`{"tenants": {
	  "casino-a": {"keys": [{"kid": "a1", "alg": "HS256",
	                         "secret": "cmFua3dpcmUtZXhhbXBsZS1zZWNyZXQtMzItYnl0ZXMh"}],
	               "limits": {"submissions_per_second": 5000}}}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	v := auth.NewVerifier(keys, auth.Options{})

	// The operator's back end mints this token; here the keyring's secret does.
	key, _ := keys.SigningKey("a1")
	token, _ := auth.Mint(key, auth.Claims{
		Tenant: "casino-a", Subject: "p42", Roles: auth.RoleRead,
		Boards: []string{"slots-*"}, Expiry: time.Now().Add(time.Hour),
	})

	scope, err := v.Verify(token)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(scope.Tenant, scope.Subject, scope.Roles)
	fmt.Println(scope.Allows(auth.RoleRead, "slots-weekly"))
	fmt.Println(scope.Allows(auth.RoleRead, "poker"))
	fmt.Println(scope.Allows(auth.RoleSubmit, "slots-weekly"))

	_, err = v.Verify("not-a-token")
	fmt.Println(errors.Is(err, auth.ErrUnauthorized), err)
	// Output:
	// casino-a p42 read
	// <nil>
	// auth: board not granted: token does not reach board "poker"
	// auth: role not granted: token lacks role submit
	// true auth: malformed token: not header.payload.signature
}

// The gateway's demo mode makes a tenant with a random secret and prints an
// admin token and a read token.
func ExampleMint() {
	keys, key, err := auth.GenerateDemo("demo")
	if err != nil {
		fmt.Println(err)
		return
	}
	exp := time.Now().Add(24 * time.Hour)
	admin, _ := auth.Mint(key, auth.Claims{Tenant: "demo", Subject: "operator", Roles: auth.RoleAdmin, Expiry: exp})
	read, _ := auth.Mint(key, auth.Claims{Tenant: "demo", Subject: "viewer", Roles: auth.RoleRead, Expiry: exp})

	v := auth.NewVerifier(keys, auth.Options{})
	for _, token := range []string{admin, read} {
		s, err := v.Verify(token)
		fmt.Println(s.Subject, s.Can(auth.RoleSubmit), err)
	}
	// Output:
	// operator true <nil>
	// viewer false <nil>
}

func ExampleScope_Allows() {
	player := auth.Scope{Tenant: "casino-a", Subject: "p42", Roles: auth.RoleRead, Boards: []string{"slots-*"}}
	err := player.Allows(auth.RoleSubmit, "slots-weekly")
	fmt.Println(errors.Is(err, auth.ErrForbidden), errors.Is(err, auth.ErrRole))
	// Output: true true
}
