package main

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rankwire/rankwire/auth"
)

// `gateway token` mints a token from the key file, so that an operator
// can make the first admin token (and tokens for scripts and tests) without
// writing a program. HS256 keys sign with the secret in the key file; RS256,
// ES256 and EdDSA keys need the private key (--private-key, PEM), which the
// key file never holds. The token is checked against the key file before it
// is printed: a private key that is not the kid's fails here, not at the
// gateway.

// maxTokenTTL bounds --ttl: a token is a bearer secret, and long-lived ones
// outlive key rotations.
const maxTokenTTL = 366 * 24 * time.Hour

// runToken mints one token as args say and prints it to stdout; it returns
// the exit status (0 minted, 2 bad arguments or keys).
func runToken(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gateway token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keysFile := fs.String("keys", "", "the tenants' key `file` (required)")
	kid := fs.String("kid", "", "the `kid` of the key to sign with; its tenant is the token's (required)")
	privateKey := fs.String("private-key", "", "PEM `file` of the private key, for an RS256, ES256 or EdDSA kid")
	roles := fs.String("roles", "read", "comma-separated `roles`: read, submit, admin")
	boards := fs.String("boards", "", "comma-separated board `patterns` the token reaches ('*' any run of characters); empty: every board")
	sub := fs.String("sub", "", "the token's `subject`: the player's member id (live views' around and the widget's own row)")
	ttl := fs.Duration("ttl", time.Hour, "how `long` the token is valid, up to 366 days")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gateway token --keys FILE --kid KID [--roles read,submit,admin] [--boards 'weekly,cup-*'] [--sub MEMBER] [--ttl 24h] [--private-key FILE]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitFor(err)
	}
	tok, err := mintToken(*keysFile, *kid, *privateKey, *roles, *boards, *sub, *ttl, time.Now())
	if err != nil {
		fmt.Fprintln(stderr, "gateway token:", err)
		return 2
	}
	fmt.Fprintln(stdout, tok)
	return 0
}

// mintToken does runToken's work; errors name the flag at fault.
func mintToken(keysFile, kid, privateKey, roles, boards, sub string, ttl time.Duration, now time.Time) (string, error) {
	switch {
	case keysFile == "":
		return "", errors.New("--keys: required")
	case kid == "":
		return "", errors.New("--kid: required")
	case ttl <= 0 || ttl > maxTokenTTL:
		return "", fmt.Errorf("--ttl %v: want more than 0 and at most 366 days", ttl)
	}
	keys, err := auth.LoadKeys(keysFile)
	if err != nil {
		return "", fmt.Errorf("--keys: %w", err)
	}
	key, ok := keys.Key(kid)
	if !ok {
		return "", fmt.Errorf("--kid %q: no such key in %s", kid, keysFile)
	}
	c := auth.Claims{Tenant: key.Tenant, Subject: sub, Expiry: now.Add(ttl).Truncate(time.Second), IssuedAt: now.Truncate(time.Second)}
	for _, name := range strings.Split(roles, ",") {
		r, ok := auth.ParseRole(strings.TrimSpace(name))
		if !ok {
			return "", fmt.Errorf("--roles: %q is not read, submit or admin", name)
		}
		c.Roles |= r
	}
	if boards != "" {
		for _, b := range strings.Split(boards, ",") {
			if b = strings.TrimSpace(b); b != "" {
				c.Boards = append(c.Boards, b)
			}
		}
	}
	sk, err := signingKey(keys, key, privateKey)
	if err != nil {
		return "", err
	}
	tok, err := auth.Mint(sk, c)
	if err != nil {
		return "", err
	}
	if _, err := auth.NewVerifier(keys, auth.Options{}).Verify(tok); err != nil {
		return "", fmt.Errorf("--private-key: the token does not verify with kid %q's public key: is it that key's private half? (%w)", kid, err)
	}
	return tok, nil
}

// signingKey returns what signs for key: the key file's secret for HS256,
// else the private key in the PEM file.
func signingKey(keys *auth.Keyring, key auth.Key, privateKey string) (auth.SigningKey, error) {
	if key.Alg == auth.HS256 {
		if privateKey != "" {
			return auth.SigningKey{}, fmt.Errorf("--private-key: kid %q is HS256: it signs with the key file's secret", key.ID)
		}
		sk, _ := keys.SigningKey(key.ID)
		return sk, nil
	}
	if privateKey == "" {
		return auth.SigningKey{}, fmt.Errorf("--private-key: required for kid %q (%s): the key file holds only its public key", key.ID, key.Alg)
	}
	data, err := os.ReadFile(privateKey)
	if err != nil {
		return auth.SigningKey{}, fmt.Errorf("--private-key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return auth.SigningKey{}, fmt.Errorf("--private-key %s: no PEM block", privateKey)
	}
	var priv any
	switch block.Type {
	case "PRIVATE KEY":
		priv, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		priv, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		priv, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		return auth.SigningKey{}, fmt.Errorf("--private-key %s: PEM block %q is not a private key", privateKey, block.Type)
	}
	if err != nil {
		return auth.SigningKey{}, fmt.Errorf("--private-key %s: %w", privateKey, err)
	}
	return auth.SigningKey{ID: key.ID, Alg: key.Alg, Key: priv}, nil
}
