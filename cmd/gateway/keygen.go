package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/names"
)

// `gateway keygen` writes a first key file, so that nobody writes one by
// hand: one tenant with one new key (an HS256 secret, or an Ed25519 key
// pair whose private half goes to its own file, never into the key file),
// and prints a first admin token signed with it. It never overwrites a
// file: a key file in use is replaced by editing it and SIGHUP.

// runKeygen does what args say; it returns the exit status (0 written, 2
// bad arguments or a file that exists or cannot be written).
func runKeygen(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gateway keygen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o keygenOptions
	fs.StringVar(&o.out, "out", "", "the key `file` to write (required; must not exist)")
	fs.StringVar(&o.tenant, "tenant", "", "the tenant's `name` (required)")
	fs.StringVar(&o.alg, "alg", auth.HS256, "HS256 (a secret in the key file) or EdDSA (a public key in it, the private key in --private-key-out)")
	fs.StringVar(&o.kid, "kid", "", "the key's `kid`; default: TENANT-1")
	fs.StringVar(&o.privOut, "private-key-out", "", "PEM `file` for the EdDSA private key (required with EdDSA; must not exist)")
	fs.DurationVar(&o.ttl, "ttl", 24*time.Hour, "how `long` the printed admin token is valid")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gateway keygen --out keys.json --tenant NAME [--alg HS256|EdDSA] [--kid KID] [--private-key-out key.pem] [--ttl 24h]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitFor(err)
	}
	tok, err := keygen(o, time.Now())
	if err != nil {
		fmt.Fprintln(stderr, "gateway keygen:", err)
		return 2
	}
	fmt.Fprintf(stderr, "gateway keygen: wrote %s (tenant %q, kid %q, %s)\n", o.out, o.tenant, o.kidOrDefault(), o.alg)
	fmt.Fprintln(stdout, tok)
	return 0
}

// keygenOptions are keygen's flags.
type keygenOptions struct {
	out, tenant, alg, kid, privOut string
	ttl                            time.Duration
}

func (o keygenOptions) kidOrDefault() string {
	if o.kid != "" {
		return o.kid
	}
	return o.tenant + "-1"
}

// check names the flag at fault.
func (o keygenOptions) check() error {
	switch {
	case o.out == "":
		return errors.New("--out: required")
	case !names.Valid(o.tenant):
		return fmt.Errorf("--tenant %q: must match %s", o.tenant, names.Pattern)
	case o.alg != auth.HS256 && o.alg != auth.EdDSA:
		return fmt.Errorf("--alg %q: want HS256 or EdDSA", o.alg)
	case o.alg == auth.EdDSA && o.privOut == "":
		return errors.New("--private-key-out: required with EdDSA")
	case o.alg == auth.HS256 && o.privOut != "":
		return errors.New("--private-key-out: HS256 keeps its secret in the key file")
	case o.ttl <= 0 || o.ttl > maxTokenTTL:
		return fmt.Errorf("--ttl %v: want more than 0 and at most 366 days", o.ttl)
	}
	return nil
}

// keygen writes the files and returns an admin token for the new key.
func keygen(o keygenOptions, now time.Time) (string, error) {
	if err := o.check(); err != nil {
		return "", err
	}
	entry, sk, pemKey, err := newKey(o.alg, o.kidOrDefault())
	if err != nil {
		return "", err
	}
	file := map[string]any{"tenants": map[string]any{o.tenant: map[string]any{"keys": []map[string]string{entry}}}}
	data, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return "", err
	}
	if _, err := auth.ParseKeys(data); err != nil { // what we write must load
		return "", err
	}
	if pemKey != nil {
		if err := writeNew(o.privOut, pemKey, "--private-key-out"); err != nil {
			return "", err
		}
	}
	if err := writeNew(o.out, append(data, '\n'), "--out"); err != nil {
		return "", err
	}
	return auth.Mint(sk, auth.Claims{Tenant: o.tenant, Roles: auth.RoleAdmin | auth.RoleSubmit | auth.RoleRead,
		Subject: "keygen", Expiry: now.Add(o.ttl).Truncate(time.Second), IssuedAt: now.Truncate(time.Second)})
}

// newKey makes a key: its key file entry, what signs with it, and for
// EdDSA the private key's PEM.
func newKey(alg, kid string) (entry map[string]string, sk auth.SigningKey, pemKey []byte, err error) {
	if alg == auth.HS256 {
		secret := make([]byte, 32)
		rand.Read(secret)
		return map[string]string{"kid": kid, "alg": alg, "secret": base64.StdEncoding.EncodeToString(secret)},
			auth.SigningKey{ID: kid, Alg: alg, Key: secret}, nil, nil
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, sk, nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, sk, nil, err
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, sk, nil, err
	}
	entry = map[string]string{"kid": kid, "alg": alg,
		"public_key": string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))}
	return entry, auth.SigningKey{ID: kid, Alg: alg, Key: priv},
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER}), nil
}

// writeNew writes a file readable by its owner only, refusing one that exists.
func writeNew(path string, data []byte, flagName string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("%s: %w", flagName, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", flagName, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", flagName, err)
	}
	return nil
}
