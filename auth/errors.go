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
// with context that never includes the token.
var (
	ErrNoToken      = classed(ErrUnauthorized, "auth: no token")
	ErrMalformed    = classed(ErrUnauthorized, "auth: malformed token")
	ErrUnknownKey   = classed(ErrUnauthorized, "auth: unknown key")
	ErrAlgorithm    = classed(ErrUnauthorized, "auth: algorithm not allowed for key")
	ErrBadSignature = classed(ErrUnauthorized, "auth: bad signature")
	ErrExpired      = classed(ErrUnauthorized, "auth: token expired")
	ErrNotYetValid  = classed(ErrUnauthorized, "auth: token not valid yet")
	ErrMissingClaim = classed(ErrUnauthorized, "auth: required claim missing")
	ErrAudience     = classed(ErrUnauthorized, "auth: token audience is not rankwire")
	ErrWrongTenant  = classed(ErrUnauthorized, "auth: token tenant does not own key")
)

// Action refusals. Each wraps ErrForbidden.
var (
	ErrRole  = classed(ErrForbidden, "auth: role not granted")
	ErrBoard = classed(ErrForbidden, "auth: board not granted")
)

// ErrMint is returned by Mint for a key or claims it cannot sign.
var ErrMint = errors.New("auth: cannot mint token")

// ErrNoSecret is returned by Keyring.SigningKeyFor for a tenant whose key
// file entry holds no HS256 secret: the gateway cannot sign its tokens.
var ErrNoSecret = errors.New("auth: no signing secret")

// classError is a sentinel that belongs to a class: errors.Is matches both the
// sentinel itself (by identity) and its class (through Unwrap).
type classError struct {
	msg   string
	class error
}

func classed(class error, msg string) error { return &classError{msg: msg, class: class} }

func (e *classError) Error() string { return e.msg }

func (e *classError) Unwrap() error { return e.class }
