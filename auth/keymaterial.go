package auth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// minRSABits is the smallest RSA modulus accepted (NIST SP 800-131A).
const minRSABits = 2048

// decodeSecret decodes an HS256 secret of at least MinSecretLen bytes. It
// accepts standard and URL-safe base64, padded or not: the two alphabets
// differ only in "+/" versus "-_", so there is no ambiguity. Errors never
// include the secret.
func decodeSecret(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("missing")
	}
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	secret, err := enc.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("decodes to %d bytes, need at least %d", len(secret), MinSecretLen)
	}
	return secret, nil
}

// decodePublicKey decodes one PEM "PUBLIC KEY" block (PKIX, as
// x509.MarshalPKIXPublicKey writes it) and checks that the key fits alg.
func decodePublicKey(alg, s string) (any, error) {
	if s == "" {
		return nil, errors.New("missing")
	}
	block, rest := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	if block.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("PEM block is %q, need \"PUBLIC KEY\"", block.Type)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, errors.New("data after the PEM block")
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("not a PKIX public key: %w", err)
	}
	return checkKeyType(alg, pub)
}

// checkKeyType returns pub if it is the kind of key alg verifies with.
func checkKeyType(alg string, pub any) (any, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if alg != RS256 {
			break
		}
		if k.N.BitLen() < minRSABits {
			return nil, fmt.Errorf("RSA key of %d bits, need at least %d", k.N.BitLen(), minRSABits)
		}
		return k, nil
	case *ecdsa.PublicKey:
		if alg != ES256 {
			break
		}
		if k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("ES256 needs a P-256 key, got %s", k.Curve.Params().Name)
		}
		return k, nil
	case ed25519.PublicKey:
		if alg == EdDSA {
			return k, nil
		}
	}
	return nil, fmt.Errorf("%s needs %s, got %s", alg, wantKeyType[alg], keyTypeName(pub))
}

var wantKeyType = map[string]string{RS256: "an RSA key", ES256: "an ECDSA key", EdDSA: "an Ed25519 key"}

func keyTypeName(pub any) string {
	switch pub.(type) {
	case *rsa.PublicKey:
		return "an RSA key"
	case *ecdsa.PublicKey:
		return "an ECDSA key"
	case ed25519.PublicKey:
		return "an Ed25519 key"
	}
	return fmt.Sprintf("a %T", pub)
}

// materialID identifies key material: the secret's bytes or the public key's
// PKIX encoding. ParseKeys calls it once per key, CompareKeys twice per
// key present in both keyrings.
func materialID(verify any) string {
	if secret, ok := verify.([]byte); ok {
		return "secret:" + string(secret)
	}
	der, _ := x509.MarshalPKIXPublicKey(verify) // it was parsed from PKIX: cannot fail
	return "public:" + string(der)
}

// materialField names the key file field that holds an alg's key material.
func materialField(alg string) string {
	if alg == HS256 {
		return "secret"
	}
	return "public_key"
}
