package wire

import "net/http"

// Code is an error code of the protocol: the "code" of an HTTP error body
// and of a WebSocket error message. Each has one HTTP status (Status).
type Code string

// The error codes (docs/PROTOCOL.md, "Errors").
const (
	CodeBadRequest       Code = "bad_request"        // 400: a body, path or query the gateway cannot take
	CodeUnauthorized     Code = "unauthorized"       // 401: no token, or one that does not verify
	CodeForbidden        Code = "forbidden"          // 403: the token lacks the role, the board or the right to the effect
	CodeNotFound         Code = "not_found"          // 404: no such board, member, rank, identity or route
	CodeMethodNotAllowed Code = "method_not_allowed" // 405: a method the route does not take (Allow lists those it does)
	CodeConflict         Code = "conflict"           // 409: a change the board's state forbids
	CodeTooLarge         Code = "too_large"          // 413: a body over MaxBody
	CodeRateLimited      Code = "rate_limited"       // 429: over a rate or a tenant limit
	CodeUnavailable      Code = "unavailable"        // 503: closing, store full or log unavailable: retry
	CodeInternal         Code = "internal"           // 500: a fault of the gateway, without details
)

// Codes lists every error code, in the order of PROTOCOL.md's table.
var Codes = []Code{CodeBadRequest, CodeUnauthorized, CodeForbidden, CodeNotFound, CodeMethodNotAllowed, CodeConflict,
	CodeTooLarge, CodeRateLimited, CodeUnavailable, CodeInternal}

// Status returns the HTTP status of c, or 500 for a code that is not one
// of Codes. O(1).
func (c Code) Status() int {
	switch c {
	case CodeBadRequest:
		return http.StatusBadRequest
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeForbidden:
		return http.StatusForbidden
	case CodeNotFound:
		return http.StatusNotFound
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case CodeConflict:
		return http.StatusConflict
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeRateLimited:
		return http.StatusTooManyRequests
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// ErrorBody is every HTTP error answer: {"error":{"code","message"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is an error's code and its message, which starts with the
// JSON path of the field at fault (`scores[7].score: ...`), the parameter
// (`limit: ...`) or `body`.
type ErrorDetail struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}
