package api

import (
	"fmt"
	"math"
	"net/http"
	"sync"

	"github.com/rankwire/rankwire/auth"
	"golang.org/x/time/rate"
)

// limiters holds one token bucket per tenant, counting submitted items. A
// bucket holds one second's worth, so a tenant may burst that much at once,
// and a batch larger than a second's worth is always refused.
type limiters struct {
	keys *auth.Keyring
	rate float64 // default items per second

	mu      sync.Mutex // guards buckets
	buckets map[string]*rate.Limiter
}

// allow takes n items from tenant's bucket, or answers rate_limited.
func (l *limiters) allow(tenant string, n int) error {
	b := l.bucket(tenant)
	if !b.AllowN(timeNow(), n) {
		return &Error{http.StatusTooManyRequests, "rate_limited",
			fmt.Sprintf("tenant %q: over %.0f submissions per second", tenant, float64(b.Limit()))}
	}
	return nil
}

func (l *limiters) bucket(tenant string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets[tenant]; ok {
		return b
	}
	perSecond := l.rate
	if l.keys != nil {
		if lim, ok := l.keys.Limits(tenant); ok && lim.SubmissionsPerSecond > 0 {
			perSecond = lim.SubmissionsPerSecond
		}
	}
	b := rate.NewLimiter(rate.Limit(perSecond), max(int(math.Ceil(perSecond)), 1))
	if l.buckets == nil {
		l.buckets = map[string]*rate.Limiter{}
	}
	l.buckets[tenant] = b
	return b
}
