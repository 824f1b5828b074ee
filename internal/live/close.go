package live

import (
	"errors"
	"strings"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/wire"
)

// The close codes are wire's (wire.CloseCodes, PROTOCOL.md's "Close
// codes"): each has one meaning, so that a client can act on the code alone.
// 1009 is sent by coder/websocket itself, for a client message over
// wire.MaxMessage (the read limit).

// closeError is a close code with its reason: the typed value a connection
// ends with. It implements error, so that a refusal can travel as one and
// be read back with errors.As.
type closeError struct {
	code   wire.CloseCode
	reason string // at most wire.MaxCloseReason bytes: a close frame holds 123
}

func (e closeError) Error() string {
	return "websocket close " + e.code.String() + ": " + e.reason
}

// newClose returns a closeError with reason made valid UTF-8 and cut to
// wire.MaxCloseReason bytes on a rune boundary: a close frame's reason
// must be valid UTF-8, and a reason may quote what a client sent.
func newClose(code wire.CloseCode, reason string) closeError {
	reason = strings.ToValidUTF8(reason, "\uFFFD")
	if len(reason) > wire.MaxCloseReason {
		reason = truncateUTF8(reason, wire.MaxCloseReason)
	}
	return closeError{code, reason}
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// tokenClose maps a refused token to its close code: 4001 where it
// expired, 4003 otherwise. The reason names the refusal, never the token.
func tokenClose(err error) closeError {
	if errors.Is(err, auth.ErrExpired) {
		return newClose(wire.CloseExpired, "token expired")
	}
	return newClose(wire.CloseForbidden, "token refused: "+err.Error())
}
