package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/auth"
)

func TestParseKeysErrors(t *testing.T) {
	f := loadFixture()
	secret := b64(randomBytes(32))
	short := b64([]byte("twelve bytes"))
	p384 := pemOf(&must(ecdsa.GenerateKey(elliptic.P384(), rand.Reader)).PublicKey)
	rsa1024 := pemOf(&must(rsa.GenerateKey(rand.Reader, 1024)).PublicKey)
	one := func(tenant string, key map[string]string) string {
		return string(must(json.Marshal(keyFileOf(tenants{tenant: {key}}))))
	}
	hs := func(kid string) map[string]string {
		return map[string]string{"kid": kid, "alg": "HS256", "secret": secret}
	}
	tests := []struct {
		name               string
		file               string
		tenant, kid, field string
		msg                string // a substring of the message
	}{
		{"bad JSON", `{"tenants":`, "", "", "", "unexpected EOF"},
		{"not an object", `[1,2]`, "", "", "", "cannot unmarshal"},
		{"trailing data", `{"tenants":{}} {}`, "", "", "", "data after the JSON object"},
		{"unknown field", strings.Replace(one("a", hs("k")), `"secret"`, `"secrets"`, 1), "", "", "", `unknown field "secrets"`},
		{"no tenants", `{"tenants":{}}`, "", "", "tenants", "no tenants"},
		{"tenants missing", `{}`, "", "", "tenants", "no tenants"},
		{"missing keys", `{"tenants":{"casino-a":{}}}`, "casino-a", "", "keys", "no keys"},
		{"empty keys", `{"tenants":{"casino-a":{"keys":[]}}}`, "casino-a", "", "keys", "no keys"},
		{"bad tenant name: upper case", one("Casino", hs("k")), "Casino", "", "", "name must match"},
		{"bad tenant name: dot", one("casino.a", hs("k")), "casino.a", "", "", "name must match"},
		{"bad tenant name: leading dash", one("-casino", hs("k")), "-casino", "", "", "name must match"},
		{"bad tenant name: too long", one(strings.Repeat("a", 65), hs("k")), strings.Repeat("a", 65), "", "", "name must match"},
		{"bad tenant name: NATS wildcard", one("casino>", hs("k")), "casino>", "", "", "name must match"},
		{"negative limits", `{"tenants":{"a":{"keys":[{"kid":"k","alg":"HS256","secret":"` + secret + `"}],"limits":{"connections":-1}}}}`,
			"a", "", "limits", "connections: negative"},
		{"aliases limit too high", `{"tenants":{"a":{"keys":[{"kid":"k","alg":"HS256","secret":"` + secret + `"}],"limits":{"aliases":10001}}}}`,
			"a", "", "limits", "aliases: 10001 is not in 0..10000"},
		{"quarantine limit too high", `{"tenants":{"a":{"keys":[{"kid":"k","alg":"HS256","secret":"` + secret + `"}],"limits":{"quarantine":100001}}}}`,
			"a", "", "limits", "quarantine: 100001 is not in 0..100000"},
		{"negative board writes", `{"tenants":{"a":{"keys":[{"kid":"k","alg":"HS256","secret":"` + secret + `"}],"limits":{"board_writes_per_second":-1}}}}`,
			"a", "", "limits", "board_writes_per_second: negative"},
		{"notification_bytes one past its most", `{"tenants":{"a":{"keys":[{"kid":"k","alg":"HS256","secret":"` + secret + `"}],"limits":{"notification_bytes":1073741825}}}}`,
			"a", "", "limits", "notification_bytes: 1073741825 is not in 0..1073741824"},
		{"webhook without a host", `{"tenants":{"a":{"keys":[{"kid":"k","alg":"HS256","secret":"` + secret + `"}],"webhook":{"url":"https:///x","secret":"0123456789abcdef"}}}}`,
			"a", "", "webhook", `url: not an http or https URL with a host`},
		{"webhook whsec_ secret not base64", `{"tenants":{"a":{"keys":[{"kid":"k","alg":"HS256","secret":"` + secret + `"}],"webhook":{"url":"https://h/x","secret":"whsec_not*base64!!!!"}}}}`,
			"a", "", "webhook", `secret: whsec_ must be followed by the base64`},
		{"webhook of another scheme", `{"tenants":{"a":{"keys":[{"kid":"k","alg":"HS256","secret":"` + secret + `"}],"webhook":{"url":"ftp://h/x","secret":"0123456789abcdef"}}}}`,
			"a", "", "webhook", "url: "},
		{"webhook secret short", `{"tenants":{"a":{"keys":[{"kid":"k","alg":"HS256","secret":"` + secret + `"}],"webhook":{"url":"https://h/x","secret":"short"}}}}`,
			"a", "", "webhook", "secret: 5 bytes, need at least 16"},
		{"webhook field misspelt", `{"tenants":{"a":{"keys":[{"kid":"k","alg":"HS256","secret":"` + secret + `"}],"webhook":{"uri":"https://h/x"}}}}`,
			"", "", "", `unknown field "uri"`},
		{"missing kid", one("a", map[string]string{"alg": "HS256", "secret": secret}), "a", "", "kid", "missing"},
		{"duplicate kid in a tenant", string(must(json.Marshal(keyFileOf(tenants{"a": {hs("k"), hs("k")}})))), "a", "k", "kid", `duplicate: also key "k" of tenant "a"`},
		{"duplicate kid across tenants", string(must(json.Marshal(keyFileOf(tenants{"a": {hs("k")}, "b": {hs("k")}})))), "b", "k", "kid", `duplicate: also key "k" of tenant "a"`},
		{"secret shared by two tenants", string(must(json.Marshal(keyFileOf(tenants{"a": {hs("k1")}, "b": {hs("k2")}})))), "b", "k2", "secret", `same key as key "k1" of tenant "a"`},
		{"public key shared by two tenants", string(must(json.Marshal(keyFileOf(tenants{
			"a": {{"kid": "k1", "alg": "EdDSA", "public_key": f.edPEM}},
			"b": {{"kid": "k2", "alg": "EdDSA", "public_key": f.edPEM}}})))), "b", "k2", "public_key", `same key as key "k1" of tenant "a"`},
		{"unknown alg", one("a", map[string]string{"kid": "k", "alg": "HS512", "secret": secret}), "a", "k", "alg", `"HS512" is not one of`},
		{"alg none", one("a", map[string]string{"kid": "k", "alg": "none"}), "a", "k", "alg", `"none" is not one of`},
		{"missing alg", one("a", map[string]string{"kid": "k", "secret": secret}), "a", "k", "alg", `"" is not one of`},
		{"short secret", one("casino-a", map[string]string{"kid": "a1", "alg": "HS256", "secret": short}), "casino-a", "a1", "secret",
			`auth: key file: tenant "casino-a" key "a1": secret: decodes to 12 bytes, need at least 32`},
		{"bad base64", one("a", map[string]string{"kid": "k", "alg": "HS256", "secret": "not*base64!"}), "a", "k", "secret", "not base64"},
		{"mixed base64 alphabets", one("a", map[string]string{"kid": "k", "alg": "HS256", "secret": "ab+/cd-_" + secret}), "a", "k", "secret", "not base64"},
		{"missing secret", one("a", map[string]string{"kid": "k", "alg": "HS256"}), "a", "k", "secret", "missing"},
		{"HS256 with a public key", one("a", map[string]string{"kid": "k", "alg": "HS256", "secret": secret, "public_key": f.rsaPEM}), "a", "k", "public_key", "HS256 takes a secret"},
		{"RS256 with a secret", one("a", map[string]string{"kid": "k", "alg": "RS256", "secret": secret, "public_key": f.rsaPEM}), "a", "k", "secret", "RS256 takes a public_key"},
		{"missing public key", one("a", map[string]string{"kid": "k", "alg": "EdDSA"}), "a", "k", "public_key", "missing"},
		{"bad PEM", one("a", map[string]string{"kid": "k", "alg": "RS256", "public_key": "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A"}), "a", "k", "public_key", "no PEM block"},
		{"PEM of a private key", one("a", map[string]string{"kid": "k", "alg": "RS256", "public_key": strings.ReplaceAll(f.rsaPEM, "PUBLIC KEY", "RSA PRIVATE KEY")}), "a", "k", "public_key", `PEM block is "RSA PRIVATE KEY"`},
		{"PEM of garbage", one("a", map[string]string{"kid": "k", "alg": "RS256", "public_key": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"}), "a", "k", "public_key", "not a PKIX public key"},
		{"data after the PEM block", one("a", map[string]string{"kid": "k", "alg": "RS256", "public_key": f.rsaPEM + f.ecPEM}), "a", "k", "public_key", "data after the PEM block"},
		{"RSA PEM for ES256", one("a", map[string]string{"kid": "k", "alg": "ES256", "public_key": f.rsaPEM}), "a", "k", "public_key", "ES256 needs an ECDSA key, got an RSA key"},
		{"Ed25519 PEM for RS256", one("a", map[string]string{"kid": "k", "alg": "RS256", "public_key": f.edPEM}), "a", "k", "public_key", "RS256 needs an RSA key, got an Ed25519 key"},
		{"ECDSA PEM for EdDSA", one("a", map[string]string{"kid": "k", "alg": "EdDSA", "public_key": f.ecPEM}), "a", "k", "public_key", "EdDSA needs an Ed25519 key, got an ECDSA key"},
		{"P-384 key for ES256", one("a", map[string]string{"kid": "k", "alg": "ES256", "public_key": p384}), "a", "k", "public_key", "ES256 needs a P-256 key, got P-384"},
		{"RSA key under 2048 bits", one("a", map[string]string{"kid": "k", "alg": "RS256", "public_key": rsa1024}), "a", "k", "public_key", "RSA key of 1024 bits, need at least 2048"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := auth.ParseKeys([]byte(tc.file))
			kerr, ok := errors.AsType[*auth.KeyFileError](err)
			if !ok || !errors.Is(err, auth.ErrKeyFile) || k != nil {
				t.Fatalf("ParseKeys = %v, %v; want a *KeyFileError", k, err)
			}
			if kerr.Tenant != tc.tenant || kerr.Kid != tc.kid || kerr.Field != tc.field {
				t.Errorf("error at tenant %q kid %q field %q, want %q %q %q", kerr.Tenant, kerr.Kid, kerr.Field, tc.tenant, tc.kid, tc.field)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("message %q lacks %q", err, tc.msg)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), short) {
				t.Errorf("message %q quotes the secret", err)
			}
		})
	}
}

func TestParseKeys(t *testing.T) {
	f := loadFixture()
	if got, want := f.keys.Tenants(), []string{"casino-a", "casino-b"}; !slices.Equal(got, want) {
		t.Errorf("Tenants = %q, want %q", got, want)
	}
	for kid, want := range map[string][2]string{"a-hs": {"casino-a", "HS256"}, "a-rs": {"casino-a", "RS256"},
		"a-es": {"casino-a", "ES256"}, "a-ed": {"casino-a", "EdDSA"}, "b-hs": {"casino-b", "HS256"}} {
		key, ok := f.keys.Key(kid)
		if !ok || key.ID != kid || key.Tenant != want[0] || key.Alg != want[1] {
			t.Errorf("Key(%q) = %+v, %v; want tenant %s alg %s", kid, key, ok, want[0], want[1])
		}
	}
	if key, ok := f.keys.Key("nope"); ok {
		t.Errorf("Key(nope) = %+v", key)
	}
}

func TestParseKeysSharedSecretWithinTenant(t *testing.T) {
	secret := b64(randomBytes(32))
	file := `{"tenants":{"a":{"keys":[{"kid":"k1","alg":"HS256","secret":"` + secret + `"},
	                                  {"kid":"k2","alg":"HS256","secret":"` + secret + `"}]}}}`
	if _, err := auth.ParseKeys([]byte(file)); err != nil {
		t.Errorf("one tenant's two kids sharing a secret: %v", err)
	}
}

func TestParseKeysLimits(t *testing.T) {
	file := `{"tenants": {
	  "casino-a": {"keys": [{"kid": "a1", "alg": "HS256", "secret": "` + b64(randomBytes(32)) + `"}]},
	  "casino-b": {"keys": [{"kid": "b1", "alg": "HS256", "secret": "` + b64(randomBytes(32)) + `"}],
	               "limits": {"submissions_per_second": 5000, "connections": 20000}}}}`
	k, err := auth.ParseKeys([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		tenant string
		want   auth.Limits
		ok     bool
	}{
		{"absent limits are zero (gateway defaults)", "casino-a", auth.Limits{}, true},
		{"set limits", "casino-b", auth.Limits{SubmissionsPerSecond: 5000, Connections: 20000}, true},
		{"unknown tenant", "casino-c", auth.Limits{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, ok := k.Limits(tc.tenant); got != tc.want || ok != tc.ok {
				t.Errorf("Limits(%q) = %+v, %v; want %+v, %v", tc.tenant, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// Every limit left zero reads as its default; a set one as itself.
func TestLimitDefaults(t *testing.T) {
	var zero auth.Limits
	if zero.BoardLimit() != auth.DefaultBoards || zero.ProfileLimit() != auth.DefaultProfiles ||
		zero.AliasLimit() != auth.DefaultAliases || zero.QuarantineLimit() != auth.MaxQuarantine ||
		zero.BoardWriteRate() != auth.DefaultBoardWrites || zero.IdentityWriteRate() != auth.DefaultIdentityWrites {
		t.Fatalf("defaults: %+v", zero)
	}
	set := auth.Limits{Boards: 1, Profiles: 2, Aliases: 3, Quarantine: 4, BoardWritesPerSecond: 5, IdentityWritesPerSecond: 6}
	if set.BoardLimit() != 1 || set.ProfileLimit() != 2 || set.AliasLimit() != 3 || set.QuarantineLimit() != 4 ||
		set.BoardWriteRate() != 5 || set.IdentityWriteRate() != 6 {
		t.Fatalf("set limits read back wrong: %+v", set)
	}
}

func TestParseKeysSecretEncodings(t *testing.T) {
	raw := []byte("\xfb\xff\xfe0123456789abcdef0123456789abcdef") // encodes with + and / (or - and _)
	tests := []struct {
		name   string
		secret string
	}{
		{"standard, padded", b64(raw)},
		{"standard, unpadded", strings.TrimRight(b64(raw), "=")},
		{"URL-safe, unpadded", strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(b64(raw)), "=")},
		{"URL-safe, padded", strings.NewReplacer("+", "-", "/", "_").Replace(b64(raw))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := `{"tenants":{"a":{"keys":[{"kid":"k","alg":"HS256","secret":"` + tc.secret + `"}]}}}`
			k, err := auth.ParseKeys([]byte(file))
			if err != nil {
				t.Fatal(err)
			}
			sk, _ := k.SigningKey("k")
			if got := sk.Key.([]byte); string(got) != string(raw) {
				t.Errorf("secret = %x, want %x", got, raw)
			}
		})
	}
}

func TestLoadKeys(t *testing.T) {
	f := loadFixture()
	dir := t.TempDir()
	good := filepath.Join(dir, "keys.json")
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(good, f.keyFile, 0o600)
	os.WriteFile(bad, []byte(`{"tenants":{"Bad":{}}}`), 0o600)
	if k, err := auth.LoadKeys(good); err != nil || len(k.Tenants()) != 2 {
		t.Errorf("LoadKeys(good) = %v, %v", k, err)
	}
	_, err := auth.LoadKeys(bad)
	if !errors.Is(err, auth.ErrKeyFile) || !strings.Contains(err.Error(), bad+`: tenant "Bad"`) {
		t.Errorf("LoadKeys(bad) = %v, want the path and tenant named", err)
	}
	_, err = auth.LoadKeys(filepath.Join(dir, "missing.json"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("LoadKeys(missing) = %v", err)
	}
}

// TestWebhookStringHidesPath: the path and query of a webhook URL often carry
// the receiver's own secret, so String keeps only scheme and host.
func TestWebhookStringHidesPath(t *testing.T) {
	w := auth.Webhook{URL: "https://hooks.example.com/t/s3cret?k=s3cret", Secret: "s3cret-s3cret-s3cret"}
	if got := w.String(); got != "webhook https://hooks.example.com" {
		t.Errorf("String() = %q", got)
	}
}
