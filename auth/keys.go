package auth

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/rankwire/rankwire/internal/names"
	"github.com/rankwire/rankwire/internal/redact"
)

// Algorithms a key may be pinned to, as written in the key file and the JWT header.
const (
	HS256 = "HS256"
	RS256 = "RS256"
	ES256 = "ES256"
	EdDSA = "EdDSA"
)

// MinSecretLen is the shortest HS256 secret accepted, in bytes: the size of
// the SHA-256 output, as RFC 7518 §3.2 requires.
const MinSecretLen = 32

// Limits are a tenant's quotas from the key file. The api layer enforces
// the rates at its edge (a token bucket per tenant and node: rates are not
// state); the counts travel in the events that could exceed them and the
// ledger decides them at apply time, so that every node refuses alike.
// Every field's zero means its default.
type Limits struct {
	// SubmissionsPerSecond caps accepted submissions (each item of a batch
	// counts). Zero means the gateway default.
	SubmissionsPerSecond float64 `json:"submissions_per_second"`
	// Connections caps concurrent WebSocket connections. Zero means the
	// gateway default.
	Connections int `json:"connections"`
	// Boards caps the tenant's boards: creating one more answers
	// rate_limited. Zero means DefaultBoards; at most MaxBoards.
	Boards int `json:"boards"`
	// Schedules caps the tenant's schedules of tournament boards: creating
	// one more answers rate_limited. Zero means DefaultSchedules; at most
	// MaxSchedules.
	Schedules int `json:"schedules"`
	// Profiles caps the members with a profile: giving one more member a
	// profile answers rate_limited. Zero means DefaultProfiles; at most
	// MaxProfiles.
	Profiles int `json:"profiles"`
	// Aliases caps one member's aliases, counting those a merge brings: a
	// link past it answers rate_limited and changes nothing. Zero means
	// DefaultAliases; at most MaxAliasesLimit.
	Aliases int `json:"aliases"`
	// Quarantine caps the items one board holds in quarantine: an item
	// breaking a rule past it is neither held nor ranked (its result's
	// reason is quarantine_full). Zero means, and at most is, MaxQuarantine.
	Quarantine int `json:"quarantine"`
	// BoardWritesPerSecond caps board settings writes (PUT and DELETE of a
	// board, resets, member removals). Zero means DefaultBoardWrites.
	BoardWritesPerSecond float64 `json:"board_writes_per_second"`
	// IdentityWritesPerSecond caps identity writes (links and profile PUTs).
	// Zero means DefaultIdentityWrites.
	IdentityWritesPerSecond float64 `json:"identity_writes_per_second"`
	// NotificationBytes caps the bytes the tenant's notifications take in
	// the notifications' stream (kept 72 h): past it, its quarantines are
	// not notified (internal/notify: quota.go). Zero means the gateway default
	// (16 MiB); at most MaxNotificationBytes.
	NotificationBytes int64 `json:"notification_bytes"`
	// TokenMintsPerMinute caps the tokens an admin of the tenant mints over
	// the API (POST /v1/tokens), per node: a burst of that many, then one
	// every minute/N. Zero means DefaultTokenMints; at most MaxTokenMints.
	TokenMintsPerMinute int `json:"token_mints_per_minute"`
}

// Defaults and bounds of the limits where a key file entry sets none.
const (
	DefaultBoards         = 10_000    // boards of a tenant
	MaxBoards             = 1_000_000 // the highest board limit a key file may set
	DefaultSchedules      = 50        // schedules of a tenant
	MaxSchedules          = 10_000    // the highest schedule limit a key file may set
	DefaultProfiles       = 1_000_000 // members with a profile
	MaxProfiles           = 16_000_000
	DefaultAliases        = 32 // aliases of one member
	MaxAliasesLimit       = 10_000
	MaxQuarantine         = 100_000 // items held per board: the ledger's own bound
	DefaultBoardWrites    = 10.0    // board settings writes per second
	DefaultIdentityWrites = 100.0   // identity writes per second
	MaxNotificationBytes  = 1 << 30 // the highest notification_bytes a key file may set
	DefaultTokenMints     = 10      // tokens minted over the API per minute
	MaxTokenMints         = 10_000
)

// TokenMintLimit returns l.TokenMintsPerMinute, or DefaultTokenMints where
// it is zero.
func (l Limits) TokenMintLimit() int { return or(l.TokenMintsPerMinute, DefaultTokenMints) }

// BoardLimit returns l.Boards, or DefaultBoards where it is zero.
func (l Limits) BoardLimit() int { return or(l.Boards, DefaultBoards) }

// ScheduleLimit returns l.Schedules, or DefaultSchedules where it is zero.
func (l Limits) ScheduleLimit() int { return or(l.Schedules, DefaultSchedules) }

// ProfileLimit returns l.Profiles, or DefaultProfiles where it is zero.
func (l Limits) ProfileLimit() int { return or(l.Profiles, DefaultProfiles) }

// AliasLimit returns l.Aliases, or DefaultAliases where it is zero.
func (l Limits) AliasLimit() int { return or(l.Aliases, DefaultAliases) }

// QuarantineLimit returns l.Quarantine, or MaxQuarantine where it is zero.
func (l Limits) QuarantineLimit() int { return or(l.Quarantine, MaxQuarantine) }

// BoardWriteRate returns l.BoardWritesPerSecond, or DefaultBoardWrites
// where it is zero.
func (l Limits) BoardWriteRate() float64 { return or(l.BoardWritesPerSecond, DefaultBoardWrites) }

// IdentityWriteRate returns l.IdentityWritesPerSecond, or
// DefaultIdentityWrites where it is zero.
func (l Limits) IdentityWriteRate() float64 {
	return or(l.IdentityWritesPerSecond, DefaultIdentityWrites)
}

// or returns v, or def where v is zero.
func or[T int | float64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Key is one verification key of a tenant. The zero Key verifies nothing.
type Key struct {
	ID     string // the kid that selects it; unique across the key file
	Alg    string // HS256, RS256, ES256 or EdDSA: the only algorithm it accepts
	Tenant string // the tenant that owns it
	verify any    // []byte, *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
}

// String describes k without its key material, so a logged Key leaks nothing.
func (k Key) String() string {
	return fmt.Sprintf("%s key %q of tenant %q", k.Alg, k.ID, k.Tenant)
}

// Keyring holds every tenant's keys and limits. It is immutable after
// ParseKeys, LoadKeys or GenerateDemo and safe for concurrent use.
type Keyring struct {
	keys     map[string]Key     // by kid
	limits   map[string]Limits  // by tenant; every tenant has an entry
	webhooks map[string]Webhook // by tenant, where it has one
	jwks     map[string]string  // by tenant: the URL of its JSON Web Key Set, where it has one
}

// Webhook is where a tenant's notifications are POSTed, and the secret
// their signature is keyed with (its bytes as written).
type Webhook struct {
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

// String describes w without its secret, and its URL without the path or
// query, which often carry a secret of the receiver's own.
func (w Webhook) String() string { return "webhook " + redact.Origin(w.URL) }

// MinWebhookSecretLen is the shortest webhook secret accepted, in bytes.
const MinWebhookSecretLen = 16

// KeyFileError says what is wrong with a key file and where. It wraps
// ErrKeyFile and Err. Its message never includes a secret.
type KeyFileError struct {
	Path   string // the file; empty from ParseKeys
	Tenant string // empty where no tenant is concerned
	Kid    string // empty where no key is concerned or the kid is missing
	Field  string // the JSON field, such as "secret"; empty for the whole file
	Err    error  // what is wrong
}

// Error reads like
// `auth: key file keys.json: tenant "casino-a" key "a1": secret: decodes to 12 bytes, need at least 32`.
func (e *KeyFileError) Error() string {
	var b strings.Builder
	b.WriteString("auth: key file")
	if e.Path != "" {
		b.WriteString(" " + e.Path)
	}
	if e.Tenant != "" {
		fmt.Fprintf(&b, ": tenant %q", e.Tenant)
	}
	if e.Kid != "" {
		fmt.Fprintf(&b, " key %q", e.Kid)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	return b.String() + ": " + e.Err.Error()
}

// Unwrap returns ErrKeyFile and the cause.
func (e *KeyFileError) Unwrap() []error { return []error{ErrKeyFile, e.Err} }

// The key file's JSON shape; see PROTOCOL.md, "Running the gateway".
type (
	keyFile struct {
		Tenants map[string]tenantEntry `json:"tenants"`
	}
	tenantEntry struct {
		Keys    []keyEntry `json:"keys"`
		JWKSURL string     `json:"jwks_url"`
		Limits  Limits     `json:"limits"`
		Webhook *Webhook   `json:"webhook"`
	}
	keyEntry struct {
		Kid       string `json:"kid"`
		Alg       string `json:"alg"`
		Secret    string `json:"secret"`
		PublicKey string `json:"public_key"`
	}
)

// LoadKeys reads and parses the key file at path, as ParseKeys does; errors
// name the path.
func LoadKeys(path string) (*Keyring, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: read key file: %w", err)
	}
	k, err := ParseKeys(data)
	if kerr, ok := errors.AsType[*KeyFileError](err); ok {
		kerr.Path = path
	}
	return k, err
}

// ParseKeys parses a key file. Unknown fields, duplicate kids (across all
// tenants), key material shared by two tenants, bad tenant names, short
// secrets and public keys of the wrong type for their alg are errors; each is
// a *KeyFileError. Tenants are checked in name order, so the error reported
// is the same on every run. As with encoding/json everywhere, an object key
// written twice keeps its last value. Cost: one PEM or base64 decode per key.
func ParseKeys(data []byte) (*Keyring, error) {
	var f keyFile
	if err := decodeStrict(data, &f); err != nil {
		return nil, &KeyFileError{Err: err}
	}
	if len(f.Tenants) == 0 {
		return nil, &KeyFileError{Field: "tenants", Err: errors.New("no tenants")}
	}
	b := builder{
		k: &Keyring{keys: map[string]Key{}, limits: map[string]Limits{}, webhooks: map[string]Webhook{},
			jwks: map[string]string{}},
		owners: map[string]Key{},
	}
	for _, name := range slices.Sorted(maps.Keys(f.Tenants)) {
		if err := b.addTenant(name, f.Tenants[name]); err != nil {
			return nil, err
		}
	}
	return b.k, nil
}

// builder fills a Keyring and remembers which key first used each key
// material, so that no two tenants share one.
type builder struct {
	k      *Keyring
	owners map[string]Key // by materialID
}

// decodeStrict decodes one JSON value, refusing unknown fields (a misspelt
// "public_key" must not pass silently) and trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		return errors.New("data after the JSON object")
	}
	return nil
}

func (b *builder) addTenant(name string, t tenantEntry) error {
	if !names.Valid(name) {
		return &KeyFileError{Tenant: name, Err: fmt.Errorf("name must match %s", names.Pattern)}
	}
	if err := checkLimits(t.Limits); err != nil {
		return &KeyFileError{Tenant: name, Field: "limits", Err: err}
	}
	if t.JWKSURL != "" {
		if err := checkJWKSURL(t.JWKSURL); err != nil {
			return &KeyFileError{Tenant: name, Field: "jwks_url", Err: err}
		}
		b.k.jwks[name] = t.JWKSURL
	}
	if len(t.Keys) == 0 && t.JWKSURL == "" {
		return &KeyFileError{Tenant: name, Field: "keys", Err: errors.New("no keys and no jwks_url")}
	}
	for _, e := range t.Keys {
		if err := b.addKey(name, e); err != nil {
			return err
		}
	}
	if t.Webhook != nil {
		if err := checkWebhook(*t.Webhook); err != nil {
			return &KeyFileError{Tenant: name, Field: "webhook", Err: err}
		}
		b.k.webhooks[name] = *t.Webhook
	}
	b.k.limits[name] = t.Limits
	return nil
}

// checkWebhook checks a webhook's URL (http or https, a host, no user or
// password) and secret; the error never includes the secret.
func checkWebhook(w Webhook) error {
	u, err := url.Parse(w.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		// The URL is not quoted: its path or query may hold the receiver's secret.
		return errors.New("url: not an http or https URL with a host and no user or password")
	}
	if len(w.Secret) < MinWebhookSecretLen {
		return fmt.Errorf("secret: %d bytes, need at least %d", len(w.Secret), MinWebhookSecretLen)
	}
	// A Standard Webhooks secret: its key is the base64 after the prefix.
	if rest, ok := strings.CutPrefix(w.Secret, "whsec_"); ok {
		key, err := base64.StdEncoding.DecodeString(rest)
		if err != nil || len(key) < MinWebhookSecretLen {
			return fmt.Errorf("secret: whsec_ must be followed by the base64 of at least %d bytes", MinWebhookSecretLen)
		}
	}
	return nil
}

// checkJWKSURL accepts an https URL with a host and no user or password:
// the keys it serves decide who is let in, so they must come over TLS.
func checkJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return fmt.Errorf("%q is not an https URL with a host", raw)
	}
	return nil
}

// addKey adds one key. A kid must be unique across the file, since it alone
// selects the key and so the tenant. Two tenants must not share key material:
// either could then sign tokens the other's kid verifies.
func (b *builder) addKey(tenant string, e keyEntry) error {
	key, err := parseKey(tenant, e)
	if err != nil {
		return err
	}
	fail := func(field, format string, other Key) error {
		return &KeyFileError{Tenant: tenant, Kid: key.ID, Field: field,
			Err: fmt.Errorf(format, other.ID, other.Tenant)}
	}
	if other, dup := b.k.keys[key.ID]; dup {
		return fail("kid", "duplicate: also key %q of tenant %q", other)
	}
	id := materialID(key.verify)
	if other, dup := b.owners[id]; dup && other.Tenant != tenant {
		return fail(materialField(key.Alg), "same key as key %q of tenant %q", other)
	}
	b.owners[id] = key
	b.k.keys[key.ID] = key
	return nil
}

func checkLimits(l Limits) error {
	if l.SubmissionsPerSecond < 0 {
		return errors.New("submissions_per_second: negative")
	}
	if l.Connections < 0 {
		return errors.New("connections: negative")
	}
	for _, c := range []struct {
		field  string
		v, max int
	}{
		{"boards", l.Boards, MaxBoards},
		{"schedules", l.Schedules, MaxSchedules},
		{"profiles", l.Profiles, MaxProfiles},
		{"aliases", l.Aliases, MaxAliasesLimit},
		{"quarantine", l.Quarantine, MaxQuarantine},
		{"token_mints_per_minute", l.TokenMintsPerMinute, MaxTokenMints},
	} {
		if c.v < 0 || c.v > c.max {
			return fmt.Errorf("%s: %d is not in 0..%d", c.field, c.v, c.max)
		}
	}
	switch {
	case l.BoardWritesPerSecond < 0 || math.IsNaN(l.BoardWritesPerSecond):
		return errors.New("board_writes_per_second: negative")
	case l.IdentityWritesPerSecond < 0 || math.IsNaN(l.IdentityWritesPerSecond):
		return errors.New("identity_writes_per_second: negative")
	}
	if l.NotificationBytes < 0 || l.NotificationBytes > MaxNotificationBytes {
		return fmt.Errorf("notification_bytes: %d is not in 0..%d", l.NotificationBytes, MaxNotificationBytes)
	}
	return nil
}

// parseKey checks one key entry and decodes its key material.
func parseKey(tenant string, e keyEntry) (Key, error) {
	if e.Kid == "" {
		return Key{}, &KeyFileError{Tenant: tenant, Field: "kid", Err: errors.New("missing")}
	}
	verify, field, err := keyMaterial(e)
	if err != nil {
		return Key{}, &KeyFileError{Tenant: tenant, Kid: e.Kid, Field: field, Err: err}
	}
	return Key{ID: e.Kid, Alg: e.Alg, Tenant: tenant, verify: verify}, nil
}

// keyMaterial decodes e's secret or public key as its alg requires; on error
// it also names the field at fault.
func keyMaterial(e keyEntry) (verify any, field string, err error) {
	switch e.Alg {
	case HS256:
		if e.PublicKey != "" {
			return nil, "public_key", errors.New("HS256 takes a secret, not a public_key")
		}
		secret, err := decodeSecret(e.Secret)
		return secret, "secret", err
	case RS256, ES256, EdDSA:
		if e.Secret != "" {
			return nil, "secret", fmt.Errorf("%s takes a public_key, not a secret", e.Alg)
		}
		pub, err := decodePublicKey(e.Alg, e.PublicKey)
		return pub, "public_key", err
	}
	return nil, "alg", fmt.Errorf("%q is not one of HS256, RS256, ES256, EdDSA", e.Alg)
}

// Tenants returns the tenant names, sorted. O(T log T).
func (k *Keyring) Tenants() []string {
	return slices.Sorted(maps.Keys(k.limits))
}

// Limits returns a tenant's limits, or false for a tenant not in the keyring.
// O(1).
func (k *Keyring) Limits(tenant string) (Limits, bool) {
	l, ok := k.limits[tenant]
	return l, ok
}

// Webhooks returns every tenant's webhook, by tenant. O(tenants).
func (k *Keyring) Webhooks() map[string]Webhook {
	return maps.Clone(k.webhooks)
}

// Webhook returns a tenant's webhook, or false where it has none. O(1).
func (k *Keyring) Webhook(tenant string) (Webhook, bool) {
	w, ok := k.webhooks[tenant]
	return w, ok
}

// JWKSURLs returns the URL of every tenant's JSON Web Key Set, by tenant,
// for the tenants that name one. O(tenants).
func (k *Keyring) JWKSURLs() map[string]string {
	return maps.Clone(k.jwks)
}

// Key returns the key with that kid, or false. O(1).
func (k *Keyring) Key(kid string) (Key, bool) {
	key, ok := k.keys[kid]
	return key, ok
}

// SigningKey returns what Mint needs to sign with the HS256 key kid, or false
// where there is no such key or it is a public key (the keyring holds no
// private keys). The secret is a copy. O(1).
func (k *Keyring) SigningKey(kid string) (SigningKey, bool) {
	key, ok := k.keys[kid]
	if !ok || key.Alg != HS256 {
		return SigningKey{}, false
	}
	return SigningKey{ID: kid, Alg: HS256, Key: bytes.Clone(key.verify.([]byte))}, true
}

// SigningKeyFor returns what Mint needs to sign a token of tenant: the
// HS256 key prefer where it is one of the tenant's, else the tenant's
// HS256 key of the lowest kid. Where the key file holds no secret of the
// tenant, the error wraps ErrNoSecret and says why: its keys are public
// keys (their private halves are never in the key file) or come from its
// jwks_url. O(keys).
func (k *Keyring) SigningKeyFor(tenant, prefer string) (SigningKey, error) {
	if key, ok := k.keys[prefer]; ok && key.Tenant == tenant && key.Alg == HS256 {
		sk, _ := k.SigningKey(prefer)
		return sk, nil
	}
	var public []string
	for _, kid := range slices.Sorted(maps.Keys(k.keys)) {
		switch key := k.keys[kid]; {
		case key.Tenant != tenant:
		case key.Alg == HS256:
			sk, _ := k.SigningKey(kid)
			return sk, nil
		default:
			public = append(public, fmt.Sprintf("%s (%s)", kid, key.Alg))
		}
	}
	if len(public) > 0 {
		return SigningKey{}, fmt.Errorf("%w: tenant %q has only public keys in the key file (%s): mint with its private key, outside the gateway", ErrNoSecret, tenant, strings.Join(public, ", "))
	}
	return SigningKey{}, fmt.Errorf("%w: tenant %q has no key in the key file: its keys come from its jwks_url, whose issuer mints its tokens", ErrNoSecret, tenant)
}
