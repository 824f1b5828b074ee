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
	keys func() *auth.Keyring // the current keyring; it may return nil
	rate float64              // default items per second

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
	perSecond := l.perSecond(tenant)
	b := rate.NewLimiter(rate.Limit(perSecond), burst(perSecond))
	if l.buckets == nil {
		l.buckets = map[string]*rate.Limiter{}
	}
	l.buckets[tenant] = b
	return b
}

// perSecond is tenant's rate from the current keyring, or the default.
func (l *limiters) perSecond(tenant string) float64 {
	if keys := l.keys(); keys != nil {
		if lim, ok := keys.Limits(tenant); ok && lim.SubmissionsPerSecond > 0 {
			return lim.SubmissionsPerSecond
		}
	}
	return l.rate
}

// burst is a bucket's size: one second's worth, at least one item.
func burst(perSecond float64) int { return max(int(math.Ceil(perSecond)), 1) }

// relimit gives every bucket its tenant's rate from the current keyring,
// after a reload, keeping the tokens it holds (a bucket is not refilled by
// a reload). Buckets of tenants the keyring lacks go: their requests are
// refused before they count. O(buckets).
func (l *limiters) relimit() {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := l.keys()
	now := timeNow()
	for tenant, b := range l.buckets {
		if keys != nil {
			if _, ok := keys.Limits(tenant); !ok {
				delete(l.buckets, tenant)
				continue
			}
		}
		perSecond := l.perSecond(tenant)
		b.SetBurstAt(now, burst(perSecond))
		b.SetLimitAt(now, rate.Limit(perSecond))
	}
}
