package hub

import "errors"

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
	// ErrCorrupt: a snapshot file that does not decode.
	ErrCorrupt = errors.New("hub: corrupt snapshot")
)
