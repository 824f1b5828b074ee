package hub

import (
	"errors"

	"github.com/rankwire/rankwire/internal/ledger"
)

// Sentinel errors, tested with errors.Is. Errors returned by the hub are
// *Error values (see ledger.Error) of one of these classes, carrying the
// class's Code and a message naming the field or value: the ledger's
// classes, which apply decides on, and the log's.
var (
	// ErrNotFound: a board, member or tenant that does not exist (404).
	ErrNotFound = ledger.ErrNotFound
	// ErrForbidden: the caller may not cause this effect, decided at apply
	// time in stream order (a merge by a link that may not merge) (403).
	ErrForbidden = ledger.ErrForbidden
	// ErrLimit: a tenant limit, such as its number of boards, would be
	// exceeded; decided at apply time in stream order (429).
	ErrLimit = ledger.ErrLimit
	// ErrConflict: a board settings change that its entries forbid (409).
	ErrConflict = ledger.ErrConflict
	// ErrBadRequest: invalid input, naming the field (400).
	ErrBadRequest = ledger.ErrBadRequest
	// ErrInternal: a state the hub should never reach from any input (500).
	ErrInternal = ledger.ErrInternal
	// ErrUnavailable: NATS did not accept or acknowledge an event (503).
	ErrUnavailable = &Error{Code: CodeUnavailable, Msg: "unavailable"}
	// ErrClosed: the Hub is closed or closing (503).
	ErrClosed = &Error{Code: CodeUnavailable, Msg: "closed"}
	// ErrStoreFull: the store refuses writes until space is freed (503).
	// Of class ErrUnavailable: errors.Is(ErrStoreFull, ErrUnavailable).
	ErrStoreFull = ErrUnavailable.Sub("the store is full; writes resume once space is freed", nil)
)

// Errors of start-up and storage, which never answer a request.
var (
	// ErrNoJetStream: the NATS server at Config.NATSURL has no JetStream.
	ErrNoJetStream = errors.New("hub: JetStream is not enabled on the NATS server")
	// ErrCorrupt: a snapshot file that does not decode.
	ErrCorrupt = ledger.ErrCorrupt
)

// Unpublished is a refusal this node decided from its replica alone,
// before anything was published: a write to a board the replica does not
// hold. Where the replica lags behind the tenant's stream the board may
// exist, so a caller may wait for it to catch up and call again
// (internal/catchup's Gate.Write); nothing reached the log, so calling
// again is always safe. errors.Is and errors.As see the refusal it wraps.
type Unpublished struct{ Err error }

// Error is the refusal's message.
func (u *Unpublished) Error() string { return u.Err.Error() }

// Unwrap returns the refusal (of class ErrNotFound).
func (u *Unpublished) Unwrap() error { return u.Err }

// storeFull returns an ErrStoreFull error whose message adds detail, such
// as the bytes used, for /readyz.
func storeFull(detail string) error {
	return ErrStoreFull.Sub(ErrStoreFull.Msg+" ("+detail+")", nil)
}

// unavailable returns an ErrUnavailable error whose client message is msg
// and whose cause (a NATS error naming streams and subjects) goes to logs
// only.
func unavailable(msg string, cause error) error { return ErrUnavailable.Sub(msg, cause) }

// logUnavailable is the client message of every failure to reach a
// tenant's log.
const logUnavailable = "the tenant's log is unavailable"
