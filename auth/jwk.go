package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
)

// A JSON Web Key Set (RFC 7517) as identity providers publish it. Only the
// fields rankwire verifies with are read; private members (d, p, q...) are
// never read, so a provider that leaks them leaks nothing through us.

// MaxJWKSKeys bounds how many keys of one set are read; the rest are
// ignored. Providers publish two or three (the current key and the next).
const MaxJWKSKeys = 100

// MaxJWKSBytes bounds the size of a fetched set.
const MaxJWKSBytes = 1 << 20

type (
	jwkSet struct {
		Keys []jwk `json:"keys"`
	}
	jwk struct {
		Kty string `json:"kty"`
		Kid string `json:"kid"`
		Use string `json:"use"`
		Alg string `json:"alg"`
		N   string `json:"n"`
		E   string `json:"e"`
		Crv string `json:"crv"`
		X   string `json:"x"`
		Y   string `json:"y"`
	}
)

// parseJWKS reads a key set published for tenant. Keys that rankwire cannot
// verify with (encryption keys, symmetric keys, other curves, no kid) are
// skipped and counted; a set that is not JSON, or has no usable key, is an
// error. O(keys).
func parseJWKS(tenant string, data []byte) (keys []Key, skipped int, err error) {
	var set jwkSet
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, 0, fmt.Errorf("not a JSON Web Key Set: %w", err)
	}
	if len(set.Keys) > MaxJWKSKeys {
		skipped += len(set.Keys) - MaxJWKSKeys
		set.Keys = set.Keys[:MaxJWKSKeys]
	}
	seen := map[string]bool{}
	for _, k := range set.Keys {
		key, err := k.key(tenant)
		if err != nil || seen[key.ID] {
			skipped++
			continue
		}
		seen[key.ID] = true
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, skipped, fmt.Errorf("no signing key rankwire can use among %d (RS256, ES256 on P-256, EdDSA on Ed25519, each with a kid)", len(set.Keys))
	}
	return keys, skipped, nil
}

// key turns one JWK into a Key of tenant, with the algorithm it pins.
func (k jwk) key(tenant string) (Key, error) {
	if k.Kid == "" || len(k.Kid) > 256 {
		return Key{}, errors.New("kid: missing or longer than 256 bytes")
	}
	if k.Use != "" && k.Use != "sig" {
		return Key{}, fmt.Errorf("use %q is not sig", k.Use)
	}
	alg, pub, err := k.public()
	if err != nil {
		return Key{}, err
	}
	if pub, err = checkKeyType(alg, pub); err != nil {
		return Key{}, err
	}
	return Key{ID: k.Kid, Alg: alg, Tenant: tenant, verify: pub}, nil
}

// public decodes the key material by kty and checks that alg, where the
// provider states one, is the algorithm that material verifies.
func (k jwk) public() (alg string, pub any, err error) {
	switch k.Kty {
	case "RSA":
		alg = RS256
		pub, err = k.rsa()
	case "EC":
		alg = ES256
		pub, err = k.ecdsa()
	case "OKP":
		alg = EdDSA
		pub, err = k.ed25519()
	default:
		return "", nil, fmt.Errorf("kty %q: not RSA, EC or OKP", k.Kty)
	}
	if err != nil {
		return "", nil, err
	}
	// RFC 9864 names the Ed25519 algorithm "Ed25519"; older providers say "EdDSA".
	if k.Alg != "" && k.Alg != alg && !(alg == EdDSA && k.Alg == "Ed25519") {
		return "", nil, fmt.Errorf("alg %q does not fit kty %q", k.Alg, k.Kty)
	}
	return alg, pub, nil
}

func (k jwk) rsa() (*rsa.PublicKey, error) {
	n, err1 := b64(k.N)
	e, err2 := b64(k.E)
	if err := errors.Join(err1, err2); err != nil || len(n) == 0 || len(e) == 0 || len(e) > 4 {
		return nil, errors.New("RSA key: n or e missing or not base64url")
	}
	exp := int(new(big.Int).SetBytes(e).Int64())
	if exp < 3 || exp%2 == 0 {
		return nil, fmt.Errorf("RSA key: exponent %d", exp)
	}
	return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: exp}, nil
}

func (k jwk) ecdsa() (*ecdsa.PublicKey, error) {
	if k.Crv != "P-256" {
		return nil, fmt.Errorf("EC key: crv %q, need P-256", k.Crv)
	}
	x, err1 := b64(k.X)
	y, err2 := b64(k.Y)
	if errors.Join(err1, err2) != nil || len(x) != 32 || len(y) != 32 {
		return nil, errors.New("EC key: x and y must be 32 bytes of base64url each")
	}
	// ParseUncompressedPublicKey checks that the point is on the curve.
	return ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
}

func (k jwk) ed25519() (ed25519.PublicKey, error) {
	if k.Crv != "Ed25519" {
		return nil, fmt.Errorf("OKP key: crv %q, need Ed25519", k.Crv)
	}
	x, err := b64(k.X)
	if err != nil || len(x) != ed25519.PublicKeySize {
		return nil, errors.New("OKP key: x must be 32 bytes of base64url")
	}
	return ed25519.PublicKey(x), nil
}

// b64 decodes base64url without padding, as RFC 7518 writes key members.
func b64(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
