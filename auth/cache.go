package auth

import (
	"sync"
	"time"
)

// DefaultCacheSize is how many verified tokens a Verifier remembers when
// Options.CacheSize is zero: about 4 MB with typical tokens.
const DefaultCacheSize = 10_000

// tokenCache remembers the scopes of verified tokens until they expire. A
// token is a bearer secret held in memory anyway while its request runs;
// the cache keeps it no longer than its exp plus Leeway. When full it
// forgets everything at once: cheap, bounded, and the next requests
// re-verify. Each cache belongs to one Keyring of its Verifier (Swap starts
// a new one), so a token that verified once stays valid until its expiry
// for as long as the keys that verified it are current.
type tokenCache struct {
	max int

	mu sync.Mutex // guards m
	m  map[string]Scope
}

func newTokenCache(size int) *tokenCache {
	switch {
	case size < 0:
		return nil
	case size == 0:
		size = DefaultCacheSize
	}
	return &tokenCache{max: size, m: make(map[string]Scope)}
}

// get returns the cached scope of token while it is valid at now. A nil
// cache always misses.
func (c *tokenCache) get(token string, now time.Time) (Scope, bool) {
	if c == nil {
		return Scope{}, false
	}
	c.mu.Lock()
	sc, ok := c.m[token]
	c.mu.Unlock()
	if !ok || !now.Before(sc.Expiry.Add(Leeway)) {
		return Scope{}, false
	}
	return sc, true
}

func (c *tokenCache) put(token string, sc Scope) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[token] = sc
}
