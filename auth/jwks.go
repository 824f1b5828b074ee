package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/rankwire/rankwire/internal/redact"
)

// Keys from a tenant's identity provider. A tenant's key file entry may name
// a jwks_url; the Verifier then also accepts tokens signed by the keys that
// URL publishes, as its tenant's. RunJWKS fetches every such URL at once and
// every Refresh after, and sooner (at most every MinRefetch) when a token
// names a kid nobody knows, so that a key the provider rotates in is accepted
// without a restart. A fetch that fails keeps the keys of the last one that
// worked and says so in JWKSStatus; a key the set no longer lists stops
// verifying at the next fetch that works.
//
// A kid must select one key: a published kid that the key file also has, or
// that two tenants' sets both publish, or key material another tenant
// already uses, is left out (logged) and verifies nothing.

// Defaults of JWKSOptions.
const (
	DefaultJWKSRefresh    = 5 * time.Minute
	DefaultJWKSMinRefetch = 30 * time.Second
	jwksFetchTimeout      = 10 * time.Second
)

// JWKSOptions tune how a Verifier fetches key sets. The zero value is what
// production uses.
type JWKSOptions struct {
	// Client fetches the sets. Nil means a client with a 10 s timeout and the
	// system's roots; tests give one that trusts their own CA.
	Client *http.Client
	// Refresh is how often every set is fetched again. Zero means
	// DefaultJWKSRefresh.
	Refresh time.Duration
	// MinRefetch bounds how often an unknown kid makes a set be fetched
	// before its Refresh is due. Zero means DefaultJWKSMinRefetch.
	MinRefetch time.Duration
	// Logger receives fetch failures and left-out keys. Nil discards them.
	Logger *slog.Logger
}

// JWKSStatus is what the Verifier knows of one tenant's key set.
type JWKSStatus struct {
	Tenant      string
	URL         string    // scheme, host and path: a query may carry a secret
	Keys        int       // keys in use from the last fetch that worked
	LastAttempt time.Time // zero before the first fetch
	LastSuccess time.Time // zero until a fetch works
	Err         string    // why the last fetch failed; empty when it worked
}

// Stale reports whether the last fetch failed, so that the keys in use (if
// any) are those of an older fetch.
func (s JWKSStatus) Stale() bool { return s.Err != "" }

// jwksFetched is the last fetch of one tenant's set, kept by the refresher.
type jwksFetched struct {
	url    string
	keys   []Key // of the last fetch that worked
	status JWKSStatus
}

// jwksState is what verification reads: every tenant's usable keys by kid,
// with a cache of the tokens they verified that goes with them (a new set
// of keys starts an empty cache). Immutable but for the cache's own lock.
type jwksState struct {
	keys   map[string]verifyKey // by kid
	source map[string]string    // kid → the URL it came from
	cache  *tokenCache
	status []JWKSStatus // by tenant name
}

// jwksRefresher fetches key sets; its fields are the refresher's own,
// guarded by mu so that a test may call refresh beside RunJWKS.
type jwksRefresher struct {
	opt     JWKSOptions
	wake    chan struct{} // cap 1: an unknown kid or a Swap asks for a fetch
	mu      sync.Mutex
	fetched map[string]*jwksFetched // by tenant
}

func newJWKSRefresher(opt JWKSOptions) *jwksRefresher {
	if opt.Client == nil {
		opt.Client = &http.Client{Timeout: jwksFetchTimeout}
	}
	if opt.Refresh <= 0 {
		opt.Refresh = DefaultJWKSRefresh
	}
	if opt.MinRefetch <= 0 {
		opt.MinRefetch = DefaultJWKSMinRefetch
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	return &jwksRefresher{opt: opt, wake: make(chan struct{}, 1), fetched: map[string]*jwksFetched{}}
}

// poke asks RunJWKS for a fetch without waiting.
func (r *jwksRefresher) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// RunJWKS keeps the key sets of the tenants that name a jwks_url fresh until
// ctx ends: it fetches them now, every Refresh, and when a token names an
// unknown kid or Swap brings a new URL. Its caller owns it (the gateway runs
// it for its lifetime); without it, no set is fetched and tokens of
// published keys are refused as ErrUnknownKey.
func (v *Verifier) RunJWKS(ctx context.Context) {
	r := v.jwksRef
	tick := time.NewTicker(r.opt.Refresh)
	defer tick.Stop()
	v.RefreshJWKS(ctx, true)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			v.RefreshJWKS(ctx, true)
		case <-r.wake:
			v.RefreshJWKS(ctx, false)
		}
	}
}

// RefreshJWKS fetches the key sets of the current Keyring: all of them with
// all, else those never fetched from their URL and those last tried at least
// MinRefetch ago. It returns once the fetched keys are in use. Safe for
// concurrent use; RunJWKS calls it.
func (v *Verifier) RefreshJWKS(ctx context.Context, all bool) {
	r := v.jwksRef
	r.mu.Lock()
	defer r.mu.Unlock()
	st := v.state.Load()
	urls := st.ring.jwks
	for tenant := range r.fetched {
		if urls[tenant] == "" {
			delete(r.fetched, tenant)
		}
	}
	for _, tenant := range slices.Sorted(maps.Keys(urls)) {
		f := r.fetched[tenant]
		due := f == nil || f.url != urls[tenant] || all || time.Since(f.status.LastAttempt) >= r.opt.MinRefetch
		if due {
			r.fetched[tenant] = r.fetch(ctx, tenant, urls[tenant], f)
		}
	}
	v.jwks.Store(r.build(st.ring, v.cacheSize, v.jwks.Load(), v.now))
}

// fetch gets one tenant's set; on failure it keeps prev's keys (when prev
// was fetched from the same URL) and records why.
func (r *jwksRefresher) fetch(ctx context.Context, tenant, rawURL string, prev *jwksFetched) *jwksFetched {
	f := &jwksFetched{url: rawURL, status: JWKSStatus{Tenant: tenant, URL: redactURL(rawURL), LastAttempt: time.Now()}}
	if prev != nil && prev.url == rawURL {
		f.keys, f.status.LastSuccess = prev.keys, prev.status.LastSuccess
	}
	keys, skipped, err := r.get(ctx, tenant, rawURL)
	if err != nil {
		f.status.Err = err.Error()
		f.status.Keys = len(f.keys)
		r.opt.Logger.Warn("auth: JWKS fetch failed; keeping the keys of the last fetch that worked",
			"tenant", tenant, "url", f.status.URL, "keys", len(f.keys), "err", err)
		return f
	}
	if skipped > 0 {
		r.opt.Logger.Info("auth: JWKS keys skipped (not signing keys rankwire verifies with)",
			"tenant", tenant, "url", f.status.URL, "skipped", skipped)
	}
	f.keys, f.status.Keys, f.status.LastSuccess = keys, len(keys), f.status.LastAttempt
	return f
}

// get fetches and parses one set.
func (r *jwksRefresher) get(ctx context.Context, tenant, rawURL string) ([]Key, int, error) {
	ctx, cancel := context.WithTimeout(ctx, jwksFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := r.opt.Client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("fetch: %w", redact.Err(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("fetch: HTTP %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxJWKSBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("read: %w", err)
	}
	if len(data) > MaxJWKSBytes {
		return nil, 0, fmt.Errorf("larger than %d bytes", MaxJWKSBytes)
	}
	return parseJWKS(tenant, data)
}

// build makes the state verification reads from every tenant's last good
// keys, leaving out each kid or key material that would not select exactly
// one tenant. It keeps prev's cache when the keys are the same.
func (r *jwksRefresher) build(ring *Keyring, cacheSize int, prev *jwksState, now func() time.Time) *jwksState {
	st := &jwksState{keys: map[string]verifyKey{}, source: map[string]string{}}
	owner := map[string]string{} // materialID → tenant, from the file and the sets
	for _, k := range ring.keys {
		owner[materialID(k.verify)] = k.Tenant
	}
	dropped := map[string]bool{}
	for _, tenant := range slices.Sorted(maps.Keys(r.fetched)) {
		f := r.fetched[tenant]
		st.status = append(st.status, f.status)
		for _, k := range f.keys {
			if reason := r.conflict(ring, st, owner, dropped, k); reason != "" {
				r.opt.Logger.Warn("auth: JWKS key left out: it would not select one tenant",
					"tenant", tenant, "kid", k.ID, "reason", reason)
				continue
			}
			owner[materialID(k.verify)] = tenant
			st.keys[k.ID] = verifyKey{Key: k, parser: newParser(k.Alg, now), keyfunc: k.keyfunc}
			st.source[k.ID] = f.url
		}
	}
	if prev != nil && sameKeys(prev.keys, st.keys) {
		st.cache = prev.cache
	} else {
		st.cache = newTokenCache(cacheSize)
	}
	return st
}

// conflict says why k cannot be used, or "". A kid two tenants' sets share
// is dropped from both (and stays dropped for this build).
func (r *jwksRefresher) conflict(ring *Keyring, st *jwksState, owner map[string]string, dropped map[string]bool, k Key) string {
	if _, inFile := ring.keys[k.ID]; inFile {
		return "the key file has this kid"
	}
	if dropped[k.ID] {
		return "another tenant's set has this kid"
	}
	if other, dup := st.keys[k.ID]; dup {
		if other.Tenant != k.Tenant {
			delete(st.keys, k.ID)
			dropped[k.ID] = true
			return "another tenant's set has this kid"
		}
		return "kid listed twice"
	}
	if t, used := owner[materialID(k.verify)]; used && t != k.Tenant {
		return "another tenant uses this key material"
	}
	return ""
}

// sameKeys reports whether a and b verify the same tokens.
func sameKeys(a, b map[string]verifyKey) bool {
	if len(a) != len(b) {
		return false
	}
	for kid, k := range a {
		if o, ok := b[kid]; !ok || !sameKey(k.Key, o.Key) {
			return false
		}
	}
	return true
}

// JWKSStatus returns the state of every tenant's key set, by tenant name;
// empty before the first RefreshJWKS or without any jwks_url. O(tenants).
func (v *Verifier) JWKSStatus() []JWKSStatus {
	js := v.jwks.Load()
	if js == nil {
		return nil
	}
	return slices.Clone(js.status)
}

// verifyJWKS verifies a token whose kid the key file lacks against the
// fetched sets. keyErr is the key file's refusal, returned when no set has
// the kid either (after asking RunJWKS for a fetch).
func (v *Verifier) verifyJWKS(st *verifierState, token string, keyErr error) (Scope, error) {
	js := v.jwks.Load()
	if len(st.ring.jwks) == 0 {
		return Scope{}, keyErr
	}
	if js == nil {
		v.jwksRef.poke()
		return Scope{}, keyErr
	}
	if sc, ok := js.cache.get(token, v.now()); ok && st.ring.jwks[sc.Tenant] == js.source[sc.Kid] {
		return sc, nil
	}
	key, err := keyFor(js.keys, token)
	if errors.Is(err, ErrUnknownKey) {
		v.jwksRef.poke()
		return Scope{}, keyErr
	}
	if err != nil {
		return Scope{}, err
	}
	// A Swap may have dropped the tenant or changed its URL since the fetch.
	if st.ring.jwks[key.Tenant] != js.source[key.ID] {
		return Scope{}, keyErr
	}
	sc, err := key.verifyToken(token)
	if err == nil {
		js.cache.put(token, sc)
	}
	return sc, err
}

// redactURL keeps a URL's scheme, host and path.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host + u.Path
}
