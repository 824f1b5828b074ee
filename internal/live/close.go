package live

import (
	"errors"
	"strconv"
	"strings"

	"github.com/rankwire/rankwire/auth"
)

// closeCode is a WebSocket close code of PROTOCOL.md's table. Each has one
// meaning, so that a client can act on the code alone.
type closeCode int

// Close codes of PROTOCOL.md ("Close codes").
const (
	closeGoingAway   closeCode = 1001 // the gateway shuts down
	closeInvalidText closeCode = 1007 // a text frame that is not valid UTF-8
	closeTooBig      closeCode = 1009 // a client message over maxWSMessage (sent by coder/websocket)
	closeExpired     closeCode = 4001 // the token expired, or none came in time
	closeForbidden   closeCode = 4003 // may not connect: bad, revoked or wrong-tenant token, refused origin
	closeSlow        closeCode = 4008 // too slow: bytes unsent past the slow timeout, or no pong
	closeOverLimit   closeCode = 4029 // over a limit: the tenant's connection cap, the message rate
)

// String returns the code's number, the metric label of rankwire_ws_closes_total.
func (c closeCode) String() string { return strconv.Itoa(int(c)) }

// closeError is a close code with its reason: the typed value a connection
// ends with. It implements error, so that a refusal can travel as one and
// be read back with errors.As.
type closeError struct {
	code   closeCode
	reason string // at most maxReason bytes: a close frame holds 123
}

func (e closeError) Error() string {
	return "websocket close " + e.code.String() + ": " + e.reason
}

// maxReason is the longest close reason sent: a close frame's payload is
// at most 125 bytes, 2 of them the code.
const maxReason = 120

// newClose returns a closeError with reason made valid UTF-8 and cut to
// maxReason bytes on a rune boundary: a close frame's reason must be valid
// UTF-8, and a reason may quote what a client sent.
func newClose(code closeCode, reason string) closeError {
	reason = strings.ToValidUTF8(reason, "\uFFFD")
	if len(reason) > maxReason {
		reason = truncateUTF8(reason, maxReason)
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
		return newClose(closeExpired, "token expired")
	}
	return newClose(closeForbidden, "token refused: "+err.Error())
}
