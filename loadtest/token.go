package loadtest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Key is one tenant's HS256 signing key, as the gateway's key file holds it.
type Key struct {
	Tenant string
	Kid    string
	Secret []byte // raw bytes, at least 32
}

type keyFile struct {
	Tenants map[string]tenantKeys `json:"tenants"`
}

type tenantKeys struct {
	Keys   []keyEntry     `json:"keys"`
	Limits map[string]any `json:"limits,omitempty"`
}

type keyEntry struct {
	Kid    string `json:"kid"`
	Alg    string `json:"alg"`
	Secret string `json:"secret"`
}

// LoadKey reads the gateway key file at path and returns tenant's first
// HS256 key. Other algorithms are skipped: the tool needs a secret to mint.
func LoadKey(path, tenant string) (Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Key{}, err
	}
	var f keyFile
	if err := json.Unmarshal(data, &f); err != nil {
		return Key{}, fmt.Errorf("loadtest: key file %s: %w", path, err)
	}
	for _, k := range f.Tenants[tenant].Keys {
		if k.Alg != "HS256" {
			continue
		}
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			return Key{}, fmt.Errorf("loadtest: key %s: secret: %w", k.Kid, err)
		}
		return Key{Tenant: tenant, Kid: k.Kid, Secret: secret}, nil
	}
	return Key{}, fmt.Errorf("loadtest: key file %s: tenant %q has no HS256 key", path, tenant)
}

// WriteKeyFile writes a key file with one HS256 key for tenant, a fresh
// random secret, and a submission limit of perSecond (0: the gateway's
// default), and returns the key.
func WriteKeyFile(path, tenant string, perSecond float64) (Key, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return Key{}, err
	}
	k := Key{Tenant: tenant, Kid: tenant + "-1", Secret: secret}
	tk := tenantKeys{Keys: []keyEntry{{Kid: k.Kid, Alg: "HS256", Secret: base64.StdEncoding.EncodeToString(secret)}}}
	if perSecond > 0 {
		tk.Limits = map[string]any{"submissions_per_second": perSecond}
	}
	data, err := json.MarshalIndent(keyFile{Tenants: map[string]tenantKeys{tenant: tk}}, "", "  ")
	if err != nil {
		return Key{}, err
	}
	return k, os.WriteFile(path, append(data, '\n'), 0o600)
}

// Mint returns an admin token of k's tenant valid for ttl.
func (k Key) Mint(ttl time.Duration) (string, error) {
	if len(k.Secret) < 32 {
		return "", errors.New("loadtest: HS256 secret shorter than 32 bytes")
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"tnt": k.Tenant, "sub": "rwload", "roles": []string{"admin"},
		"aud": "rankwire", "exp": time.Now().Add(ttl).Unix(), "iat": time.Now().Unix(),
	})
	tok.Header["kid"] = k.Kid
	return tok.SignedString(k.Secret)
}
