package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/identity"
	"github.com/rankwire/rankwire/internal/names"
	"github.com/rankwire/rankwire/wire"
)

// Minting tokens over the API (POST /v1/tokens): an admin of a tenant asks
// the gateway for a token of its own tenant, which the gateway signs with
// the tenant's HS256 secret from the key file. The boundary
// (docs/SECURITY.md, "Minting"): the tenant is the caller's, never named by
// the body; the role at most the caller's (only admin reaches the route, and
// admin may mint admin, submit or read); the boards within the caller's
// reach; the lifetime bounded; the rate bounded per tenant and node (the
// key file's token_mints_per_minute). Each mint is logged (who, for whom,
// what; never the token). It is not an event of the log: tokens are not
// tenant state (the gateway keeps none, and cannot revoke one), and the
// admin log is per board; the log line on the minting node is the record.

// Bounds of a minted token's lifetime. MaxMintTTL is `gateway token`'s
// bound: a token is a bearer secret, and long-lived ones outlive key
// rotations.
const (
	DefaultMintTTL = 24 * time.Hour
	MinMintTTL     = time.Minute
	MaxMintTTL     = 366 * 24 * time.Hour
)

// maxMintBoards bounds the boards claim of a minted token.
const maxMintBoards = 64

// mintLimiters holds one token bucket per tenant for minting: a burst of
// the tenant's token_mints_per_minute, refilled at that rate. Safe for
// concurrent use.
type mintLimiters struct {
	mu      sync.Mutex // guards buckets
	buckets map[string]mintBucket
}

type mintBucket struct {
	perMinute int // the limit it was made for: a reload that changes it makes a new bucket
	lim       *rate.Limiter
}

// allow takes one mint from tenant's bucket of perMinute, or answers
// rate_limited naming the limit.
func (m *mintLimiters) allow(tenant string, perMinute int) error {
	m.mu.Lock()
	b, ok := m.buckets[tenant]
	if !ok || b.perMinute != perMinute {
		b = mintBucket{perMinute, rate.NewLimiter(rate.Every(time.Minute/time.Duration(perMinute)), perMinute)}
		if m.buckets == nil {
			m.buckets = map[string]mintBucket{}
		}
		m.buckets[tenant] = b
	}
	m.mu.Unlock()
	if !b.lim.AllowN(timeNow(), 1) {
		return &Error{http.StatusTooManyRequests, string(wire.CodeRateLimited),
			"tenant: over " + strconv.Itoa(perMinute) + " tokens minted per minute (limit token_mints_per_minute)"}
	}
	return nil
}

// mint answers POST /v1/tokens (role admin) with a token of the caller's
// tenant, as the body asks within the caller's own grant.
func (s *Server) mint(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	var body wire.MintRequest
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	c, err := mintClaims(sc, body, timeNow())
	if err != nil {
		return err
	}
	keys := s.keyring()
	if keys == nil {
		return &Error{http.StatusConflict, string(wire.CodeConflict), "tenant: the gateway has no key file to sign with"}
	}
	sk, err := keys.SigningKeyFor(sc.Tenant, sc.Kid)
	if errors.Is(err, auth.ErrNoSecret) {
		return &Error{http.StatusConflict, string(wire.CodeConflict), "tenant: " + strings.TrimPrefix(err.Error(), auth.ErrNoSecret.Error()+": ")}
	}
	lim, _ := keys.Limits(sc.Tenant)
	if err := s.mints.allow(sc.Tenant, lim.TokenMintLimit()); err != nil {
		return err
	}
	tok, err := auth.Mint(sk, c)
	if err == nil {
		_, err = s.cfg.Verifier.Verify(tok) // what the gateway mints, it takes
	}
	if err != nil {
		return err
	}
	s.log.Info("token minted", "tenant", sc.Tenant, "by", sc.Subject, "by_kid", sc.Kid, "kid", sk.ID,
		"sub", c.Subject, "role", body.Role, "boards", c.Boards, "expires", c.Expiry.UTC().Format(time.RFC3339))
	writeJSON(w, http.StatusOK, wire.MintedToken{Token: tok, Tenant: sc.Tenant, Kid: sk.ID, Role: body.Role,
		Boards: c.Boards, Sub: c.Subject, ExpiresAt: c.Expiry.UTC().Format(time.RFC3339)})
	return nil
}

// mintClaims checks body against the caller's scope sc and returns the
// claims to sign; errors name the field.
func mintClaims(sc auth.Scope, body wire.MintRequest, now time.Time) (auth.Claims, error) {
	role, ok := auth.ParseRole(body.Role)
	switch {
	case !ok:
		return auth.Claims{}, badRequest("role: %q is not read, submit or admin", truncate(body.Role))
	case !sc.Can(role):
		return auth.Claims{}, forbidden("role: %s is above the token's own", body.Role)
	}
	if body.Sub != "" {
		if p := identity.Reason(body.Sub); p != "" {
			return auth.Claims{}, badRequest("sub: %s", p)
		}
	}
	ttl, err := mintTTL(body.TTL)
	if err != nil {
		return auth.Claims{}, err
	}
	boards, err := mintBoards(sc, body.Boards)
	if err != nil {
		return auth.Claims{}, err
	}
	now = now.Truncate(time.Second)
	return auth.Claims{Tenant: sc.Tenant, Subject: body.Sub, Roles: role, Boards: boards,
		Expiry: now.Add(ttl), IssuedAt: now}, nil
}

// mintTTL parses a ttl: a Go duration in MinMintTTL..MaxMintTTL, or
// DefaultMintTTL where empty.
func mintTTL(s string) (time.Duration, error) {
	if s == "" {
		return DefaultMintTTL, nil
	}
	ttl, err := time.ParseDuration(s)
	if err != nil || ttl < MinMintTTL || ttl > MaxMintTTL {
		return 0, badRequest("ttl: %q is not a duration from 1m to 8784h (366 days), such as \"24h\"", truncate(s))
	}
	return ttl, nil
}

// mintBoards returns the boards claim of a minted token: the caller's
// reach where asked is nil, else asked, each entry a board name or a '*'
// pattern within the caller's reach. An entry is within it where one of
// the caller's patterns matches the entry read as a name, '*' as itself:
// every name the entry matches is then matched by that pattern (a star of
// the entry can only be swallowed by a star of the pattern). Sound, and
// exact for names and for a pattern copied from the caller's.
func mintBoards(sc auth.Scope, asked []string) ([]string, error) {
	if asked == nil {
		return sc.Boards, nil
	}
	if len(asked) > maxMintBoards {
		return nil, badRequest("boards: %d entries, at most %d", len(asked), maxMintBoards)
	}
	out := make([]string, 0, len(asked))
	for i, b := range asked {
		if !names.Valid(strings.ReplaceAll(b, "*", "x")) {
			return nil, badRequest("boards[%d]: %q is not a board name or pattern (%s, '*' any run)", i, truncate(b), names.Pattern)
		}
		if !sc.CanBoard(b) {
			return nil, forbidden("boards[%d]: %q is beyond the token's own boards", i, truncate(b))
		}
		out = append(out, b)
	}
	return out, nil
}
