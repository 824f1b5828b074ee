package wire

import "strconv"

// CloseCode is a WebSocket close code the gateway ends a connection with.
// Each has one meaning, so that a client can act on the code alone
// (docs/PROTOCOL.md, "Close codes").
type CloseCode int

// The close codes.
const (
	CloseGoingAway   CloseCode = 1001 // the gateway shuts down: reconnect (another gateway first), resume with since
	CloseInvalidText CloseCode = 1007 // a text frame that is not valid UTF-8: fix the client, do not reconnect
	CloseTooBig      CloseCode = 1009 // a client message over MaxMessage: fix the client, do not reconnect
	CloseExpired     CloseCode = 4001 // the token expired, or no auth message in time: get a new token, reconnect
	CloseForbidden   CloseCode = 4003 // may not connect (token, origin, tenant, key removed): stop
	CloseSlow        CloseCode = 4008 // too slow: unsent bytes past the slow timeout, or no pong: reconnect, resume
	CloseOverLimit   CloseCode = 4029 // over a limit (connection cap, message rate): reconnect with backoff
)

// CloseCodes lists every close code the gateway sends, in ascending order.
var CloseCodes = []CloseCode{CloseGoingAway, CloseInvalidText, CloseTooBig, CloseExpired, CloseForbidden,
	CloseSlow, CloseOverLimit}

// String returns the code's number ("4003").
func (c CloseCode) String() string { return strconv.Itoa(int(c)) }

// Final reports whether a client must not reconnect after c: the same
// connection would be refused again (4003) or the client sends what the
// gateway does not take (1007, 1009). O(1).
func (c CloseCode) Final() bool {
	return c == CloseForbidden || c == CloseInvalidText || c == CloseTooBig
}

// Close is a close frame as the golden files show it: its code and its
// reason (at most MaxCloseReason bytes of UTF-8). It is not a JSON message
// on the wire; clients read it from their WebSocket library.
type Close struct {
	Code   CloseCode `json:"code"`
	Reason string    `json:"reason"`
}
