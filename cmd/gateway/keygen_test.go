package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
)

// gateway keygen writes a key file the gateway loads, a private key only
// its owner reads, and an admin token that verifies; `gateway token` then
// mints with what it wrote. It refuses, naming the flag, what would not work,
// and never overwrites a file.
func TestKeygenCommand(t *testing.T) {
	for _, alg := range []string{"HS256", "EdDSA"} {
		t.Run(alg, func(t *testing.T) {
			dir := t.TempDir()
			keysFile, privFile := filepath.Join(dir, "keys.json"), filepath.Join(dir, "key.pem")
			args := []string{"--out", keysFile, "--tenant", "casino-a", "--alg", alg}
			if alg == "EdDSA" {
				args = append(args, "--private-key-out", privFile)
			}
			var out, errOut strings.Builder
			if code := runKeygen(args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			keys, err := auth.LoadKeys(keysFile)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := auth.NewVerifier(keys, auth.Options{}).Verify(strings.TrimSpace(out.String()))
			if err != nil || sc.Tenant != "casino-a" || !sc.Can(auth.RoleAdmin) {
				t.Fatalf("printed token: %+v, %v: want an admin of casino-a", sc, err)
			}
			for _, f := range []string{keysFile, privFile} {
				if fi, err := os.Stat(f); err == nil && fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: mode %v, want 0600", f, fi.Mode().Perm())
				}
			}
			priv := ""
			if alg == "EdDSA" {
				priv = privFile
				if data, _ := os.ReadFile(keysFile); strings.Contains(string(data), "PRIVATE") {
					t.Fatal("the key file holds the private key")
				}
			}
			if _, err := mintToken(keysFile, "casino-a-1", priv, "read", "", "", time.Hour, time.Now()); err != nil {
				t.Fatalf("gateway token with keygen's files: %v", err)
			}
			errOut.Reset()
			if code := runKeygen(args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "exists") {
				t.Fatalf("second run over the same files: exit %d, %q: want a refusal", code, errOut.String())
			}
		})
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tenant", "a"}, "--out"},
		{[]string{"--out", "k", "--tenant", "no spaces"}, "--tenant"},
		{[]string{"--out", "k", "--tenant", "a", "--alg", "RS256"}, "--alg"},
		{[]string{"--out", "k", "--tenant", "a", "--alg", "EdDSA"}, "--private-key-out"},
		{[]string{"--out", "k", "--tenant", "a", "--private-key-out", "p"}, "--private-key-out"},
	} {
		var out, errOut strings.Builder
		if code := runKeygen(c.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%v: exit %d, %q: want 2 naming %s", c.args, code, errOut.String(), c.want)
		}
	}
}
