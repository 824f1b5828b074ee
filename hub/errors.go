package hub

import (
	"errors"
	"fmt"
)

// Code is the class of a hub error, named as the protocol's error codes
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

// Error is an error of the hub that crosses to the edge: a Code that
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

// Sentinel errors, tested with errors.Is. Errors returned by the hub are
// *Error values of one of these classes (built by errorf or unavailable),
// carrying the class's Code and a message naming the field or value.
// Errors built the older way, fmt.Errorf("%w: ...", ErrNotFound), still
// match errors.Is and still carry the Code, but the edge then answers
// with the class's message only.
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
	// ErrUnavailable: NATS did not accept or acknowledge an event (503).
	ErrUnavailable = sentinel(CodeUnavailable, "unavailable")
	// ErrClosed: the Hub is closed or closing (503).
	ErrClosed = sentinel(CodeUnavailable, "closed")
	// ErrInternal: a state the hub should never reach from any input (500).
	ErrInternal = sentinel(CodeInternal, "internal error")
	// ErrStoreFull: the store refuses writes until space is freed (503).
	// Of class ErrUnavailable: errors.Is(ErrStoreFull, ErrUnavailable).
	ErrStoreFull = &Error{Code: CodeUnavailable, Msg: "the store is full; writes resume once space is freed", class: ErrUnavailable}
)

// Errors of start-up and storage, which never answer a request.
var (
	// ErrNoJetStream: the NATS server at Config.NATSURL has no JetStream.
	ErrNoJetStream = errors.New("hub: JetStream is not enabled on the NATS server")
	// ErrCorrupt: a snapshot file that does not decode.
	ErrCorrupt = errors.New("hub: corrupt snapshot")
)

func sentinel(c Code, msg string) *Error { return &Error{Code: c, Msg: msg} }

// storeFull returns an ErrStoreFull error whose message adds detail, such
// as the bytes used, for /readyz.
func storeFull(detail string) error {
	return &Error{Code: CodeUnavailable, Msg: ErrStoreFull.Msg + " (" + detail + ")", class: ErrStoreFull}
}

// errorf returns an error of class whose client message is format applied
// to args. The message must name the field or value, never an internal
// name.
func errorf(class *Error, format string, args ...any) error {
	return &Error{Code: class.Code, Msg: fmt.Sprintf(format, args...), class: class}
}

// unavailable returns an ErrUnavailable error whose client message is msg
// and whose cause (a NATS error naming streams and subjects) goes to logs
// only.
func unavailable(msg string, cause error) error {
	return &Error{Code: CodeUnavailable, Msg: msg, Cause: cause, class: ErrUnavailable}
}

// logUnavailable is the client message of every failure to reach a
// tenant's log.
const logUnavailable = "the tenant's log is unavailable"

// clip shortens a value a client sent before a message quotes it, so that
// a hostile megabyte is not echoed back or logged whole.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
