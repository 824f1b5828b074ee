package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
)

// tokenFixture writes a key file with an HS256 key (kid h1 of casino-a) and
// an EdDSA key (kid e1 of casino-b), and e1's private key, and another
// private key that is not e1's.
func tokenFixture(t *testing.T) (keys, priv, wrong string) {
	t.Helper()
	dir := t.TempDir()
	pub, sk, _ := ed25519.GenerateKey(rand.Reader)
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	pubDER, _ := x509.MarshalPKIXPublicKey(pub)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{'s'}, 32))
	keys = write("keys.json", fmt.Appendf(nil, `{"tenants":{
		"casino-a":{"keys":[{"kid":"h1","alg":"HS256","secret":%q}]},
		"casino-b":{"keys":[{"kid":"e1","alg":"EdDSA","public_key":%q}]}}}`, secret, pubPEM))
	der, _ := x509.MarshalPKCS8PrivateKey(sk)
	priv = write("e1.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	der, _ = x509.MarshalPKCS8PrivateKey(other)
	wrong = write("other.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	return keys, priv, wrong
}

// gateway token mints tokens that the gateway's verifier accepts with the
// claims asked for, from an HS256 secret and from an EdDSA private key; it
// refuses, naming the flag, what would not work.
func TestTokenCommand(t *testing.T) {
	keysFile, priv, wrong := tokenFixture(t)
	keys, err := auth.LoadKeys(keysFile)
	if err != nil {
		t.Fatal(err)
	}
	v := auth.NewVerifier(keys, auth.Options{})
	mint := func(args ...string) (string, string, int) {
		var out, errOut strings.Builder
		code := runToken(args, &out, &errOut)
		return strings.TrimSpace(out.String()), errOut.String(), code
	}

	tok, _, code := mint("--keys", keysFile, "--kid", "h1", "--roles", "admin", "--ttl", "2h")
	sc, err := v.Verify(tok)
	if code != 0 || err != nil || sc.Tenant != "casino-a" || !sc.Can(auth.RoleAdmin) || sc.Boards != nil ||
		sc.Expiry.Before(time.Now().Add(119*time.Minute)) || sc.Expiry.After(time.Now().Add(121*time.Minute)) {
		t.Fatalf("an HS256 admin token: %d %+v %v", code, sc, err)
	}
	tok, _, code = mint("--keys", keysFile, "--kid", "e1", "--private-key", priv, "--roles", "read,submit", "--boards", "weekly, cup-*", "--sub", "p42")
	sc, err = v.Verify(tok)
	if code != 0 || err != nil || sc.Tenant != "casino-b" || sc.Subject != "p42" || !sc.Can(auth.RoleSubmit) || sc.Can(auth.RoleAdmin) ||
		!slices.Equal(sc.Boards, []string{"weekly", "cup-*"}) || !sc.CanBoard("cup-7") || sc.CanBoard("daily") {
		t.Fatalf("an EdDSA token: %d %+v %v", code, sc, err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kid", "h1"}, "--keys: required"},
		{[]string{"--keys", keysFile}, "--kid: required"},
		{[]string{"--keys", keysFile, "--kid", "nope"}, `--kid "nope": no such key`},
		{[]string{"--keys", keysFile, "--kid", "h1", "--roles", "read,owner"}, `--roles: "owner" is not read, submit or admin`},
		{[]string{"--keys", keysFile, "--kid", "h1", "--ttl", "0s"}, "--ttl 0s: want more than 0"},
		{[]string{"--keys", keysFile, "--kid", "h1", "--ttl", "9000h"}, "--ttl 9000h0m0s"},
		{[]string{"--keys", keysFile, "--kid", "e1"}, `--private-key: required for kid "e1" (EdDSA)`},
		{[]string{"--keys", keysFile, "--kid", "e1", "--private-key", wrong}, "--private-key: the token does not verify with kid \"e1\"'s public key"},
		{[]string{"--keys", keysFile, "--kid", "e1", "--private-key", keysFile}, "no PEM block"},
		{[]string{"--keys", keysFile, "--kid", "h1", "--private-key", priv}, `--private-key: kid "h1" is HS256`},
		{[]string{"--keys", filepath.Join(t.TempDir(), "missing.json"), "--kid", "h1"}, "--keys: auth: read key file"},
	} {
		out, errOut, code := mint(tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, out %q, err %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}
