// Package refusal logs refused requests and connections (of the HTTP API
// and of the WebSocket plane) under a rate limit, so that a flood of
// refused clients cannot flood the log, and never with a token: callers
// pass the refusal's reason and the tenant where known (KeyTenant finds it
// from a token's header without trusting or keeping the token).
//
// It imports auth and the standard library only.
package refusal

import (
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/rankwire/rankwire/auth"
)

// Reasons a WebSocket or HTTP request is refused, as logged (the "reason"
// attribute) and as counted by a Log's rate limit.
const (
	Origin  = "origin"         // the page's origin is not allowed
	Token   = "token"          // the token may not connect
	Cap     = "connection_cap" // the tenant is at its connection cap
	Rate    = "message_rate"   // the client sent messages faster than allowed
	TooBig  = "message_size"   // a client message over the WebSocket read limit
	BadText = "invalid_utf8"   // a text frame that is not valid UTF-8

	Forbidden   = "forbidden"    // HTTP 403: the token's roles or boards do not reach it
	RateLimited = "rate_limited" // HTTP 429: over a tenant's limit
)

// Lines is how many lines per second a Log writes for one reason; the rest
// are counted and reported as "dropped" on the next line written for that
// reason.
const Lines = 5

// Log logs refusals with slog under one message, at most Lines per second
// per reason. Safe for concurrent use; O(1) per line. Its mutex is a leaf:
// nothing else is locked while it is held.
type Log struct {
	log *slog.Logger
	msg string           // the lines' message: "websocket refused", "http refused"
	now func() time.Time // time.Now; tests replace it

	mu      sync.Mutex // guards reasons
	reasons map[string]*window
}

// window counts one reason's lines in the current second.
type window struct {
	start   time.Time
	written int
	dropped int
}

// New returns a Log that writes msg lines to log.
func New(log *slog.Logger, msg string) *Log {
	return &Log{log: log, msg: msg, now: time.Now, reasons: map[string]*window{}}
}

// Refused logs one refusal for reason with attrs (slog key-value pairs),
// or counts it as dropped when reason's lines this second are used up.
// reason is one of this package's constants: the map stays that small.
func (r *Log) Refused(reason string, attrs ...any) {
	dropped, ok := r.take(reason)
	if !ok {
		return
	}
	args := append([]any{"reason", reason}, attrs...)
	if dropped > 0 {
		args = append(args, "dropped", dropped)
	}
	r.log.Warn(r.msg, args...)
}

// take reports whether a line for reason may be written now, and how many
// were dropped since the last one written.
func (r *Log) take(reason string) (dropped int, ok bool) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.reasons[reason]
	if w == nil {
		w = &window{start: now}
		r.reasons[reason] = w
	}
	if now.Sub(w.start) >= time.Second {
		w.start, w.written = now, 0
	}
	if w.written >= Lines {
		w.dropped++
		return 0, false
	}
	w.written++
	dropped, w.dropped = w.dropped, 0
	return dropped, true
}

// TokenAttrs are the log attributes of a refused token: the refusal and
// the tenant, where known.
func TokenAttrs(err error, tenant string) []any {
	attrs := []any{"err", err.Error()}
	if tenant != "" {
		attrs = append(attrs, "tenant", tenant)
	}
	return attrs
}

// KeyTenant returns the tenant that owns the key a token's header names
// (kid), or "": what a refusal log can say of a token that did not verify.
// It reads the header only, at most 1 KiB of it; the token itself is never
// kept or logged. O(len(header)).
func KeyTenant(keys *auth.Keyring, token string) string {
	head, _, ok := strings.Cut(token, ".")
	if !ok || keys == nil || len(head) > 1<<10 {
		return ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(head)
	var h struct {
		Kid string `json:"kid"`
	}
	if err != nil || json.Unmarshal(raw, &h) != nil {
		return ""
	}
	if k, ok := keys.Key(h.Kid); ok {
		return k.Tenant
	}
	return ""
}
