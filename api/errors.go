package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

// Error is a protocol error: an HTTP status, one of PROTOCOL.md's codes, and
// a message that names the offending field.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func badRequest(format string, args ...any) *Error {
	return &Error{http.StatusBadRequest, "bad_request", fmt.Sprintf(format, args...)}
}

func forbidden(format string, args ...any) *Error {
	return &Error{http.StatusForbidden, "forbidden", fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *Error {
	return &Error{http.StatusNotFound, "not_found", fmt.Sprintf(format, args...)}
}

// classes maps the sentinel errors of the packages below to protocol codes,
// checked in order.
var classes = []struct {
	err    error
	status int
	code   string
}{
	{auth.ErrUnauthorized, http.StatusUnauthorized, "unauthorized"},
	{auth.ErrForbidden, http.StatusForbidden, "forbidden"},
	{hub.ErrBadRequest, http.StatusBadRequest, "bad_request"},
	{hub.ErrNotFound, http.StatusNotFound, "not_found"},
	{hub.ErrConflict, http.StatusConflict, "conflict"},
	{hub.ErrForbidden, http.StatusForbidden, "forbidden"},
	{hub.ErrLimit, http.StatusTooManyRequests, "rate_limited"},
	{hub.ErrUnavailable, http.StatusServiceUnavailable, "unavailable"},
	{hub.ErrClosed, http.StatusServiceUnavailable, "unavailable"},
}

// toError turns any error into a protocol Error. Errors of no known class
// are internal: logged in full, answered without detail.
func toError(err error, log *slog.Logger) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &Error{http.StatusRequestEntityTooLarge, "too_large",
			fmt.Sprintf("body: larger than %d bytes", tooBig.Limit)}
	}
	for _, c := range classes {
		if errors.Is(err, c.err) {
			return &Error{c.status, c.code, cleanMessage(err.Error())}
		}
	}
	log.Error("internal error", "err", err)
	return &Error{http.StatusInternalServerError, "internal", "internal error"}
}

// cleanMessage strips the package prefixes of sentinel errors, leaving the
// part that names the field: "hub: bad request: scores[2].member: empty"
// reads "scores[2].member: empty".
func cleanMessage(msg string) string {
	for _, p := range []string{"hub: bad request: ", "hub: not found: ", "hub: conflict: ",
		"hub: forbidden: ", "hub: limit: ", "hub: unavailable: ", "hub: "} {
		if rest, ok := strings.CutPrefix(msg, p); ok {
			return rest
		}
	}
	return msg
}

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, e *Error) {
	var body errorBody
	body.Error.Code, body.Error.Message = e.Code, e.Message
	writeJSON(w, e.Status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client hung up: nothing to do
}
