package ledger

import (
	"errors"
	"fmt"
)

// Code is the class of an error of the hub or the ledger, named as the protocol's error codes
// (PROTOCOL.md "Errors"): the edge maps it to an HTTP status or a
// WebSocket error without reading the message.
type Code string

// The codes a hub error carries.
const (
	CodeBadRequest  Code = "bad_request"
	CodeForbidden   Code = "forbidden"
	CodeNotFound    Code = "not_found"
	CodeConflict    Code = "conflict"
	CodeRateLimited Code = "rate_limited"
	CodeUnavailable Code = "unavailable"
	CodeInternal    Code = "internal"
)

// Error is an error of the hub (and of the ledger, whose errors the hub
// returns as they are) that crosses to the edge: a Code that
// decides the status, and a message for the client that names the field or
// thing concerned (`scores[7].score: not a finite number`, `board "x"`) and
// never an internal name such as a stream. The edge reads it with
// errors.As. Cause, where set, is the detail for logs only: it is part of
// Error() and Unwrap(), never of Msg.
type Error struct {
	Code  Code
	Msg   string // for the client: names the JSON field or the thing, never a Go type or stream
	Cause error  // for logs; may be nil

	class *Error // the sentinel this error belongs to; nil for a sentinel itself
}

// Error returns "hub: " and Msg, then the cause where there is one. It is
// the text for logs; clients see Msg.
func (e *Error) Error() string {
	if e.Cause == nil {
		return "hub: " + e.Msg
	}
	return "hub: " + e.Msg + ": " + e.Cause.Error()
}

// Unwrap returns the cause, so that errors.Is(err, context.Canceled) and
// the like see through a hub error.
func (e *Error) Unwrap() error { return e.Cause }

// Is reports whether target is e itself or a class e belongs to,
// directly or through its class (errors.Is(err, ErrNotFound);
// errors.Is(ErrStoreFull, ErrUnavailable)).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && (t == e || e.class != nil && e.class.Is(t))
}

// Sentinel errors, tested with errors.Is. Errors of the ledger are *Error
// values of one of these classes (built by errorf), carrying the class's
// Code and a message naming the field or value. The hub adds its own
// classes (unavailable, closed, store full) with Sub.
var (
	// ErrNotFound: a board, member or tenant that does not exist (404).
	ErrNotFound = sentinel(CodeNotFound, "not found")
	// ErrForbidden: the caller may not cause this effect, decided at apply
	// time in stream order (a merge by a link that may not merge) (403).
	ErrForbidden = sentinel(CodeForbidden, "forbidden")
	// ErrLimit: a tenant limit, such as its number of boards, would be
	// exceeded; decided at apply time in stream order (429).
	ErrLimit = sentinel(CodeRateLimited, "limit")
	// ErrConflict: a board settings change that its entries forbid (409).
	ErrConflict = sentinel(CodeConflict, "conflict")
	// ErrBadRequest: invalid input, naming the field (400).
	ErrBadRequest = sentinel(CodeBadRequest, "bad request")
	// ErrInternal: a state the hub should never reach from any input (500).
	ErrInternal = sentinel(CodeInternal, "internal error")
)

// ErrCorrupt: a snapshot that does not decode. It never answers a request.
var ErrCorrupt = errors.New("hub: corrupt snapshot")

func sentinel(c Code, msg string) *Error { return &Error{Code: c, Msg: msg} }

// Sub returns an error of class e (errors.Is(err, e) holds) whose client
// message is msg and whose cause, for logs only, is cause (may be nil).
func (e *Error) Sub(msg string, cause error) *Error {
	return &Error{Code: e.Code, Msg: msg, Cause: cause, class: e}
}

// errorf returns an error of class whose client message is format applied
// to args. The message must name the field or value, never an internal
// name.
func errorf(class *Error, format string, args ...any) error {
	return class.Sub(fmt.Sprintf(format, args...), nil)
}

// Errorf is errorf for the hub: an error of class whose client message is
// format applied to args.
func Errorf(class *Error, format string, args ...any) error { return errorf(class, format, args...) }

// Clip shortens a value a client sent before a message quotes it, so that
// a hostile megabyte is not echoed back or logged whole.
func Clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
