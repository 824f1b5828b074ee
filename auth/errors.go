package auth

import "errors"

// Error classes. The api layer maps them to protocol codes with errors.Is:
// ErrUnauthorized to 401 "unauthorized", ErrForbidden to 403 "forbidden".
// ErrKeyFile is a configuration error: the gateway refuses to start.
var (
	ErrUnauthorized = errors.New("auth: unauthorized")
	ErrForbidden    = errors.New("auth: forbidden")
	ErrKeyFile      = errors.New("auth: invalid key file")
)

// Token refusals. Each wraps ErrUnauthorized; returned errors wrap one of them
// with context that never includes the token. The texts of refusals reach
// clients as they are, so they start with what they are about (token, role,
// board) and carry no package prefix.
var (
	ErrNoToken      = classed(ErrUnauthorized, "token: missing")
	ErrMalformed    = classed(ErrUnauthorized, "token: malformed")
	ErrUnknownKey   = classed(ErrUnauthorized, "token: unknown key")
	ErrAlgorithm    = classed(ErrUnauthorized, "token: algorithm not allowed for its key")
	ErrBadSignature = classed(ErrUnauthorized, "token: bad signature")
	ErrExpired      = classed(ErrUnauthorized, "token: expired")
	ErrNotYetValid  = classed(ErrUnauthorized, "token: not valid yet")
	ErrMissingClaim = classed(ErrUnauthorized, "token: required claim missing")
	ErrAudience     = classed(ErrUnauthorized, "token: audience is not rankwire")
	ErrWrongTenant  = classed(ErrUnauthorized, "token: its tenant does not own the key")
)

// Action refusals. Each wraps ErrForbidden.
var (
	ErrRole  = classed(ErrForbidden, "role: not granted")
	ErrBoard = classed(ErrForbidden, "board: not granted")
)

// ErrMint is returned by Mint for a key or claims it cannot sign.
var ErrMint = errors.New("auth: cannot mint token")

// classError is a sentinel that belongs to a class: errors.Is matches both the
// sentinel itself (by identity) and its class (through Unwrap).
type classError struct {
	msg   string
	class error
}

func classed(class error, msg string) error { return &classError{msg: msg, class: class} }

func (e *classError) Error() string { return e.msg }

func (e *classError) Unwrap() error { return e.class }
