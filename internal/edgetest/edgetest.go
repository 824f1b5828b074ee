// Package edgetest holds what the tests of the edge, api and
// internal/live, share beside their WebSocket client (internal/wstest)
// and log buffer (internal/logtest): the test tenants' secrets, key files
// and tokens.
//
// The test tenants are casino-a and casino-b, with one HS256 key each
// (kids a1 and b1, secrets Secret('a') and Secret('b')); a test names one
// by its letter. Test helper: only tests import it. It may import auth
// (plus the standard library).
package edgetest

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/rankwire/rankwire/auth"
)

// Secret is the HS256 secret of test tenant "casino-" + b: 32 bytes b,
// base64 as a key file holds it.
func Secret(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }

// KeysA parses a key file with casino-a (kid a1, Secret('a')), its limits
// object holding aLimits (a JSON fragment: `"boards":1`), followed by
// more (a JSON fragment of further tenants: `,"casino-c":{...}`). A key
// file that does not parse fails t.
func KeysA(t testing.TB, aLimits, more string) *auth.Keyring {
	t.Helper()
	k, err := auth.ParseKeys(fmt.Appendf(nil, `{"tenants":{
		"casino-a":{"keys":[{"kid":"a1","alg":"HS256","secret":%q}],"limits":{%s}}%s}}`, Secret('a'), aLimits, more))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Mint signs c as a token of test tenant "casino-" + tenant with its key
// in keys (kid tenant + "1"), setting c.Tenant. A key missing from keys
// fails t.
func Mint(t testing.TB, keys *auth.Keyring, tenant string, c auth.Claims) string {
	t.Helper()
	key, ok := keys.SigningKey(tenant + "1")
	if !ok {
		t.Fatalf("edgetest: no signing key %s1", tenant)
	}
	c.Tenant = "casino-" + tenant
	tok, err := auth.Mint(key, c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
