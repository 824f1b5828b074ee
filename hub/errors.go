package hub

import (
	"errors"
	"fmt"
)

// Code is the class of a hub error: what the edge answers with. The values
// are the protocol's error codes.
type Code string

// The codes a hub error may carry.
const (
	CodeBadRequest  Code = "bad_request"  // invalid input, naming the field (400)
	CodeNotFound    Code = "not_found"    // a board, member or tenant that does not exist (404)
	CodeConflict    Code = "conflict"     // a change the current state forbids (409)
	CodeForbidden   Code = "forbidden"    // an effect the caller may not cause (403)
	CodeLimit       Code = "rate_limited" // a tenant limit would be exceeded (429)
	CodeUnavailable Code = "unavailable"  // the log did not take or acknowledge an event (503)
)

// Error is a hub error a client may be shown: a Code and a message that
// names the field or object at fault, in the protocol's words (no Go type,
// no stream or subject name). The edge reads it with errors.As. Detail,
// when set, is for the operator's log only (it may name internals).
type Error struct {
	Code   Code
	Msg    string
	Detail error
}

// Error returns "hub: <code>: <msg>", with the detail where set: for logs.
func (e *Error) Error() string {
	s := "hub: " + string(e.Code)
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	var refines *Error
	if e.Detail != nil && !errors.As(e.Detail, &refines) { // a refined sentinel: already said
		s += " (" + e.Detail.Error() + ")"
	}
	return s
}

// Unwrap returns the detail, so errors.Is reaches a cause such as
// context.Canceled.
func (e *Error) Unwrap() error { return e.Detail }

// Is reports whether target is the sentinel of e's code (an Error with no
// message), so errors.Is(err, ErrNotFound) holds for every not-found error.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Msg == "" && t.Detail == nil && t.Code == e.Code
}

// errf returns an Error of code with a formatted message. The message must
// name the field or object and must not include internal names.
func errf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// unavailable returns an unavailable Error with a client-safe message and
// the cause kept for the log.
func unavailable(msg string, cause error) *Error {
	return &Error{Code: CodeUnavailable, Msg: msg, Detail: cause}
}

// Sentinels, one per code, for errors.Is. Errors the hub returns are Errors
// carrying a message; they match the sentinel of their code.
var (
	ErrNotFound    = &Error{Code: CodeNotFound}
	ErrConflict    = &Error{Code: CodeConflict}
	ErrBadRequest  = &Error{Code: CodeBadRequest}
	ErrForbidden   = &Error{Code: CodeForbidden}
	ErrLimit       = &Error{Code: CodeLimit}
	ErrUnavailable = &Error{Code: CodeUnavailable}
)

// Errors that are not a client's to see in detail.
var (
	// ErrClosed: the Hub is closed or closing (503). It matches
	// ErrUnavailable.
	ErrClosed = &Error{Code: CodeUnavailable, Msg: "the gateway is shutting down", Detail: errClosed}
	// ErrNoJetStream: the NATS server at Config.NATSURL has no JetStream.
	ErrNoJetStream = errors.New("hub: JetStream is not enabled on the NATS server")
	// ErrStoreFull: the store refuses writes until space is freed (503).
	// It matches ErrUnavailable.
	ErrStoreFull = &Error{Code: CodeUnavailable, Msg: "the store is full; writes resume once space is freed"}
	// ErrCorrupt: a snapshot file that does not decode.
	ErrCorrupt = errors.New("hub: corrupt snapshot")
)

var errClosed = errors.New("hub: closed")
