package live

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/wire"
)

// Error is an error message of the protocol (PROTOCOL.md, "Live views over
// WebSocket"): one of its codes and a message that names the field a client
// sent, by its JSON path. It implements error, so that a refusal travels as
// one and is read back with errors.As.
type Error struct {
	Code    wire.Code
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

func badRequest(format string, args ...any) *Error {
	return &Error{wire.CodeBadRequest, fmt.Sprintf(format, args...)}
}

func forbidden(format string, args ...any) *Error {
	return &Error{wire.CodeForbidden, fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *Error {
	return &Error{wire.CodeNotFound, fmt.Sprintf(format, args...)}
}

// errorOf turns an error met while serving a message into its protocol
// error: an *Error as it is; anything else through Config.ErrorOf.
func (p *Plane) errorOf(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	code, msg := p.errorFn(err)
	return &Error{wire.Code(code), msg}
}

// hubErrorOf is Config.ErrorOf when none is given: a *hub.Error by its
// code and message (which name the field, never a stream); anything else
// internal, logged in full and answered without detail.
func hubErrorOf(log *slog.Logger) func(error) (string, string) {
	return func(err error) (string, string) {
		var he *hub.Error
		if errors.As(err, &he) {
			return string(he.Code), he.Msg
		}
		log.Error("internal error", "err", err)
		return "internal", "internal error"
	}
}

// truncate shortens what a client sent before it is echoed in a message,
// as api does.
func truncate(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:64] + "…"
}
