package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/wire"
)

// Error is a protocol error: an HTTP status, one of PROTOCOL.md's codes
// (wire.Codes), and a message that names the offending field.
type Error struct {
	Status  int
	Code    string // a wire.Code
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func badRequest(format string, args ...any) *Error {
	return &Error{http.StatusBadRequest, string(wire.CodeBadRequest), fmt.Sprintf(format, args...)}
}

func forbidden(format string, args ...any) *Error {
	return &Error{http.StatusForbidden, string(wire.CodeForbidden), fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *Error {
	return &Error{http.StatusNotFound, string(wire.CodeNotFound), fmt.Sprintf(format, args...)}
}

// statuses maps the protocol codes that a hub error may carry to HTTP.
var statuses = map[hub.Code]int{
	hub.CodeBadRequest:  http.StatusBadRequest,
	hub.CodeForbidden:   http.StatusForbidden,
	hub.CodeNotFound:    http.StatusNotFound,
	hub.CodeConflict:    http.StatusConflict,
	hub.CodeRateLimited: http.StatusTooManyRequests,
	hub.CodeUnavailable: http.StatusServiceUnavailable,
}

// detailLines is how many causes of unavailable answers (which may name
// streams, so only the log sees them) are logged per second; the rest are
// counted and reported on the next line, so an outage cannot flood the log.
const detailLines = 10

// detailLog rate-limits those lines. Safe for concurrent use; O(1) per call.
type detailLog struct {
	mu      sync.Mutex
	sec     int64 // the Unix second being counted
	written int
	dropped int
}

var details detailLog

// log writes err's line unless this second's lines are used up.
func (d *detailLog) log(log *slog.Logger, err error) {
	d.mu.Lock()
	if now := time.Now().Unix(); now != d.sec {
		d.sec, d.written = now, 0
	}
	if d.written >= detailLines {
		d.dropped++
		d.mu.Unlock()
		return
	}
	d.written++
	dropped := d.dropped
	d.dropped = 0
	d.mu.Unlock()
	log.Warn("unavailable", "err", err, "dropped", dropped)
}

// reset starts counting afresh (tests).
func (d *detailLog) reset() {
	d.mu.Lock()
	d.sec, d.written, d.dropped = 0, 0, 0
	d.mu.Unlock()
}

// toError turns any error into a protocol Error: an api *Error as it is; a
// body over the limit too_large; a *hub.Error by its Code, answering its
// Msg (which names the field, never a stream); an auth refusal by its class
// (see authError). Errors of no known class are internal: logged in full,
// answered without detail. Unavailable errors are logged with their cause.
func toError(err error, log *slog.Logger) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &Error{http.StatusRequestEntityTooLarge, string(wire.CodeTooLarge),
			fmt.Sprintf("body: larger than %d bytes", tooBig.Limit)}
	}
	var he *hub.Error
	if errors.As(err, &he) {
		if status, ok := statuses[he.Code]; ok {
			if he.Code == hub.CodeUnavailable {
				details.log(log, err)
			}
			return &Error{status, string(he.Code), he.Msg}
		}
	}
	if a := authError(err); a != nil {
		return a
	}
	if errors.Is(err, context.Canceled) {
		// The client went away (the SDK cancels an attempt another gateway
		// answered first): no fault here, and nobody reads the answer.
		log.Debug("request cancelled by the client", "err", err)
		return &Error{http.StatusServiceUnavailable, string(wire.CodeUnavailable), "the request was cancelled"}
	}
	log.Error("internal error", "err", err)
	return &Error{http.StatusInternalServerError, string(wire.CodeInternal), "internal error"}
}

// hubMessage is the client message of a hub error (such as Hub.Writable's
// reason for /readyz), or "unavailable" for any other error.
func hubMessage(err error) string {
	var he *hub.Error
	if errors.As(err, &he) {
		return he.Msg
	}
	return "unavailable"
}

// authError maps a refusal of package auth to its protocol code and a
// message of the protocol's words, or nil. Its detail (which kid, which
// claim) stays in auth's error text, which the client does not see.
func authError(err error) *Error {
	for _, a := range authMessages {
		if errors.Is(err, a.err) {
			return &Error{a.status, a.code, a.msg}
		}
	}
	return nil
}

// authMessages lists auth's sentinels, the specific ones before their
// classes.
var authMessages = []struct {
	err    error
	status int
	code   string
	msg    string
}{
	{auth.ErrNoToken, http.StatusUnauthorized, string(wire.CodeUnauthorized), "token: missing"},
	{auth.ErrMalformed, http.StatusUnauthorized, string(wire.CodeUnauthorized), "token: malformed"},
	{auth.ErrUnknownKey, http.StatusUnauthorized, string(wire.CodeUnauthorized), "token: kid names no key of the gateway"},
	{auth.ErrAlgorithm, http.StatusUnauthorized, string(wire.CodeUnauthorized), "token: alg is not the algorithm of its key"},
	{auth.ErrBadSignature, http.StatusUnauthorized, string(wire.CodeUnauthorized), "token: bad signature"},
	{auth.ErrExpired, http.StatusUnauthorized, string(wire.CodeUnauthorized), "token: expired"},
	{auth.ErrNotYetValid, http.StatusUnauthorized, string(wire.CodeUnauthorized), "token: not valid yet"},
	{auth.ErrMissingClaim, http.StatusUnauthorized, string(wire.CodeUnauthorized), "token: a required claim is missing"},
	{auth.ErrAudience, http.StatusUnauthorized, string(wire.CodeUnauthorized), "token: aud does not contain \"rankwire\""},
	{auth.ErrWrongTenant, http.StatusUnauthorized, string(wire.CodeUnauthorized), "token: tnt is not the tenant of its key"},
	{auth.ErrUnauthorized, http.StatusUnauthorized, string(wire.CodeUnauthorized), "token: refused"},
	{auth.ErrRole, http.StatusForbidden, string(wire.CodeForbidden), "token: role not granted"},
	{auth.ErrBoard, http.StatusForbidden, string(wire.CodeForbidden), "token: does not reach the board"},
	{auth.ErrForbidden, http.StatusForbidden, string(wire.CodeForbidden), "token: not allowed"},
}

func writeError(w http.ResponseWriter, e *Error) {
	writeJSON(w, e.Status, wire.ErrorBody{Error: wire.ErrorDetail{Code: wire.Code(e.Code), Message: e.Message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client hung up: nothing to do
}
