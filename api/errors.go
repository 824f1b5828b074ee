package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

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

// authClasses maps the auth package's sentinel errors to protocol codes.
var authClasses = []struct {
	err    error
	status int
	code   string
}{
	{auth.ErrUnauthorized, http.StatusUnauthorized, "unauthorized"},
	{auth.ErrForbidden, http.StatusForbidden, "forbidden"},
}

// hubStatus is the HTTP status of each hub error code.
var hubStatus = map[hub.Code]int{
	hub.CodeBadRequest:  http.StatusBadRequest,
	hub.CodeNotFound:    http.StatusNotFound,
	hub.CodeConflict:    http.StatusConflict,
	hub.CodeForbidden:   http.StatusForbidden,
	hub.CodeLimit:       http.StatusTooManyRequests,
	hub.CodeUnavailable: http.StatusServiceUnavailable,
}

// toError turns any error into a protocol Error. A hub.Error gives its code
// and message (its detail, which may name internals, goes to the log only);
// errors of no known class are internal: logged in full, answered without
// detail. O(depth of the error chain).
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
	var he *hub.Error
	if errors.As(err, &he) {
		return fromHub(he, err, log)
	}
	for _, c := range authClasses {
		if errors.Is(err, c.err) {
			return &Error{c.status, c.code, err.Error()}
		}
	}
	log.Error("internal error", "err", err)
	return &Error{http.StatusInternalServerError, "internal", "internal error"}
}

// fromHub answers a hub error with its code and message. A hub error without
// a message (a bare sentinel, or one wrapped with fmt.Errorf) answers its
// code's generic text and is logged, as a construction site to fix.
func fromHub(he *hub.Error, err error, log *slog.Logger) *Error {
	status, ok := hubStatus[he.Code]
	if !ok {
		log.Error("internal error", "err", err)
		return &Error{http.StatusInternalServerError, "internal", "internal error"}
	}
	msg := he.Msg
	if msg == "" {
		log.Warn("hub error without a message", "err", err)
		msg = strings.ReplaceAll(string(he.Code), "_", " ")
	}
	if he.Detail != nil {
		details.log(log, string(he.Code), err)
	}
	return &Error{status, string(he.Code), msg}
}

// detailLines is how many refusal details (the causes behind unavailable
// answers, which may name streams) the log takes per second; the rest are
// counted and reported on the next line, so an outage cannot flood the log.
const detailLines = 10

// detailLog rate-limits the details of hub errors. Safe for concurrent use;
// O(1) per call.
type detailLog struct {
	mu      sync.Mutex
	sec     int64 // the Unix second being counted
	written int
	dropped int
}

var details detailLog

// reset starts counting afresh (tests).
func (d *detailLog) reset() {
	d.mu.Lock()
	d.sec, d.written, d.dropped = 0, 0, 0
	d.mu.Unlock()
}

func (d *detailLog) log(log *slog.Logger, code string, err error) {
	d.mu.Lock()
	now := time.Now().Unix()
	if now != d.sec {
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
	log.Warn("request refused", "code", code, "err", err, "dropped", dropped)
}

// readyReason is what /readyz says of an error from hub.Writable: the hub
// error's message, for operators.
func readyReason(err error) string {
	var he *hub.Error
	if errors.As(err, &he) && he.Msg != "" {
		return he.Msg
	}
	return err.Error()
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
