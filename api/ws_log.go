package api

import (
	"log/slog"
	"sync"
	"time"
)

// Reasons a WebSocket or HTTP request is refused, as logged (the "reason"
// attribute) and as counted by the refusal log's rate limit.
const (
	refusedOrigin  = "origin"         // the page's origin is not allowed
	refusedToken   = "token"          // the token may not connect
	refusedCap     = "connection_cap" // the tenant is at its connection cap
	refusedRate    = "message_rate"   // the client sent messages faster than allowed
	refusedTooBig  = "message_size"   // a client message over maxWSMessage
	refusedBadText = "invalid_utf8"   // a text frame that is not valid UTF-8

	refusedForbidden   = "forbidden"    // HTTP 403: the token's roles or boards do not reach it
	refusedRateLimited = "rate_limited" // HTTP 429: over a tenant's limit
)

// refusalLines is how many lines per second the refusal log writes for
// one reason; the rest are counted and reported as "dropped" on the next
// line written for that reason.
const refusalLines = 5

// refusalLog logs refusals (of WebSockets, or of HTTP requests) with slog
// under one message, at most refusalLines per
// second per reason, so that a flood of refused clients cannot flood the
// log. It never logs a token: callers pass the refusal's reason and the
// tenant where known. Safe for concurrent use; O(1) per line.
type refusalLog struct {
	log *slog.Logger
	msg string           // the lines' message: "websocket refused", "http refused"
	now func() time.Time // time.Now; tests replace it

	mu      sync.Mutex // guards reasons
	reasons map[string]*logWindow
}

// logWindow counts one reason's lines in the current second.
type logWindow struct {
	start   time.Time
	written int
	dropped int
}

func newRefusalLog(log *slog.Logger, msg string) *refusalLog {
	return &refusalLog{log: log, msg: msg, now: time.Now, reasons: map[string]*logWindow{}}
}

// refused logs one refusal for reason with attrs (slog key-value pairs),
// or counts it as dropped when reason's lines this second are used up.
// reason is one of the refused* constants: the map stays that small.
func (r *refusalLog) refused(reason string, attrs ...any) {
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
func (r *refusalLog) take(reason string) (dropped int, ok bool) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.reasons[reason]
	if w == nil {
		w = &logWindow{start: now}
		r.reasons[reason] = w
	}
	if now.Sub(w.start) >= time.Second {
		w.start, w.written = now, 0
	}
	if w.written >= refusalLines {
		w.dropped++
		return 0, false
	}
	w.written++
	dropped, w.dropped = w.dropped, 0
	return dropped, true
}
