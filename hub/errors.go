package hub

import (
	"errors"
	"fmt"
)

// Sentinel errors. Returned errors wrap them with the offending field or
// value; callers (api) test them with errors.Is and map them to protocol codes.
var (
	// ErrNotFound: a board, member or tenant that does not exist (404).
	ErrNotFound = errors.New("hub: not found")
	// ErrConflict: a board settings change that its entries forbid (409).
	ErrConflict = errors.New("hub: conflict")
	// ErrBadRequest: invalid input, naming the field (400).
	ErrBadRequest = errors.New("hub: bad request")
	// ErrUnavailable: NATS did not accept or acknowledge an event (503).
	ErrUnavailable = errors.New("hub: unavailable")
	// ErrClosed: the Hub is closed or closing (503).
	ErrClosed = errors.New("hub: closed")
	// ErrNoJetStream: the NATS server at Config.NATSURL has no JetStream.
	ErrNoJetStream = errors.New("hub: JetStream is not enabled on the NATS server")
	// ErrForbidden: the caller may not cause this effect, decided at apply
	// time in stream order (a merge by a link that may not merge) (403).
	ErrForbidden = errors.New("hub: forbidden")
	// ErrLimit: a tenant limit, such as its number of boards, would be
	// exceeded; decided at apply time in stream order (429).
	ErrLimit = errors.New("hub: limit")
	// ErrStoreFull: the store refuses writes until space is freed (503).
	// It wraps ErrUnavailable.
	ErrStoreFull = fmt.Errorf("%w: the store is full; writes resume once space is freed", ErrUnavailable)
	// ErrCorrupt: a snapshot file that does not decode.
	ErrCorrupt = errors.New("hub: corrupt snapshot")
)
