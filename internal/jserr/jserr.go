// Package jserr classifies the errors of NATS and JetStream calls for the
// hub's decisions: whether a publish is worth another attempt with the
// same message id (Retryable), and whether JetStream refused for lack of
// storage (StoreFull). It knows JetStream's error codes so that callers
// never match on message text.
//
// It imports nats.go only.
package jserr

import (
	"context"
	"errors"
	"slices"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// retryableCodes are JetStream's errors of a stream between leaders: the
// cluster temporarily unavailable (10008) and the stream offline (10118);
// and a publish whose message id another publish of it is still being
// stored under (10158, "duplicate message id is in process": an attempt
// sent before the leader changed, still in the new leader's pipeline): the
// next attempt with the same id is answered as that one's duplicate, or
// stores it. Seen in the fault suite right after a paused leader's
// successor was elected: the write answered 503 and marked the tenant's
// log unavailable.
var retryableCodes = []jetstream.ErrorCode{10008, 10118, 10158}

// storeFullCodes are the JetStream errors of a store out of space: the
// account's limit (10002), the server's limit (10023), no storage for a
// new stream (10047).
var storeFullCodes = []jetstream.ErrorCode{10002, 10023, 10047}

// Retryable reports whether err means "no leader, timeout, no responders
// or reconnecting": worth another attempt with the same message id.
func Retryable(err error) bool {
	switch {
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, jetstream.ErrNoStreamResponse),
		errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, nats.ErrConnectionReconnecting), errors.Is(err, nats.ErrDisconnected):
		return true
	}
	return hasCode(err, retryableCodes)
}

// StoreFull reports whether err is JetStream refusing for lack of storage.
func StoreFull(err error) bool { return hasCode(err, storeFullCodes) }

// hasCode reports whether err is a JetStream API error with one of codes.
func hasCode(err error, codes []jetstream.ErrorCode) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && slices.Contains(codes, apiErr.ErrorCode)
}
