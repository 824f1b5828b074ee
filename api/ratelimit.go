package api

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"

	"github.com/go-chi/chi/v5"
	"github.com/rankwire/rankwire/auth"
	"golang.org/x/time/rate"
)

// limiters holds one token bucket per tenant, counting submitted items or
// writes of one kind. A bucket holds one second's worth, so a tenant may
// burst that much at once, and a batch larger than a second's worth is
// always refused. Rates are not state: each node keeps its own buckets, so
// a cluster of n nodes lets up to n times the rate through.
type limiters struct {
	keys func() *auth.Keyring // the current keyring; it may return nil
	rate float64              // default per second
	of   func(auth.Limits) float64
	what string // what is counted, as the refusal names it: "submissions"
	name string // the key file's limit, as the refusal names it: "submissions_per_second"

	mu      sync.Mutex // guards buckets
	buckets map[string]*rate.Limiter
}

// allow takes n items from tenant's bucket, or answers rate_limited.
func (l *limiters) allow(tenant string, n int) error {
	b := l.bucket(tenant)
	if !b.AllowN(timeNow(), n) {
		return &Error{http.StatusTooManyRequests, "rate_limited",
			fmt.Sprintf("tenant %q: over %s %s per second (limit %s)", tenant,
				strconv.FormatFloat(float64(b.Limit()), 'f', -1, 64), l.what, l.name)}
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
		if lim, ok := keys.Limits(tenant); ok && l.of(lim) > 0 {
			return l.of(lim)
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

// newLimiters returns the Server's buckets: submissions at submissions
// (the default rate where the key file sets none), board settings writes
// and identity writes at their limits' defaults.
func newLimiters(keys func() *auth.Keyring, submissions float64) (sub, boards, identities *limiters) {
	sub = &limiters{keys: keys, rate: submissions, what: "submissions", name: "submissions_per_second",
		of: func(l auth.Limits) float64 { return l.SubmissionsPerSecond }}
	boards = &limiters{keys: keys, rate: auth.DefaultBoardWrites, what: "board writes", name: "board_writes_per_second",
		of: auth.Limits.BoardWriteRate}
	identities = &limiters{keys: keys, rate: auth.DefaultIdentityWrites, what: "identity writes",
		name: "identity_writes_per_second", of: auth.Limits.IdentityWriteRate}
	return sub, boards, identities
}

// rated is h after one write is taken from the tenant's bucket in l: a
// refusal answers rate_limited naming the limit, before h reads the body.
// Only a token that may write (role, and the route's board where it has
// one) takes from the bucket: a player's read token must not drain its
// operator's writes. Others go on to h, which refuses them (403).
func (s *Server) rated(l *limiters, role auth.Role, h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		sc := scopeOf(r)
		board := chi.URLParam(r, "board")
		if sc.Can(role) && (board == "" || sc.CanBoard(board)) {
			if err := l.allow(sc.Tenant, 1); err != nil {
				return err
			}
		}
		return h(w, r)
	}
}
