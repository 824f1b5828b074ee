package hub

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/jserr"
)

// This file is the store's health: whether JetStream can take writes, for
// /readyz and for the error a refused write answers.
//
// JetStream refuses a message once the bytes it stores exceed its max
// store (Config.MaxStore on the embedded server; the account's or the
// server's limit on an external one) and takes messages again as soon as
// stored bytes fall below it (a stream deleted, a limit raised): the Hub
// needs no restart, it only has to say so. A refused publish answers
// ErrStoreFull, which names no stream.

// fullMemory is how long a write refused for lack of storage keeps Writable
// failing where the store's use cannot be measured (an external server's
// own limit): long enough for a load balancer to notice, short enough that
// the next write soon tries again.
const fullMemory = 5 * time.Second

// storeHealth remembers the last write refused for lack of storage.
type storeHealth struct {
	fullAt atomic.Int64 // unix ns of the last refusal; 0: none
}

// noteFull records a write refused for lack of storage.
func (sh *storeHealth) noteFull(now time.Time) { sh.fullAt.Store(now.UnixNano()) }

// noteOK records a write the store took: it is not full.
func (sh *storeHealth) noteOK() { sh.fullAt.Store(0) }

// recentlyFull reports whether a write was refused for lack of storage
// within fullMemory of now.
func (sh *storeHealth) recentlyFull(now time.Time) bool {
	at := sh.fullAt.Load()
	return at != 0 && now.UnixNano()-at < int64(fullMemory)
}

// publishErr turns a failed publish into the error callers see, noting a
// full store: ErrStoreFull (no stream name) for lack of storage, else
// ErrUnavailable.
func (sl *streamLog) publishErr(err error, stream string) error {
	if jserr.StoreFull(err) {
		sl.store.noteFull(time.Now())
		sl.log.Warn("hub: the store is full: writes are refused until space is freed", "err", err)
		return ErrStoreFull
	}
	return unavailable(logUnavailable, fmt.Errorf("publish to %s: %w", stream, err))
}

// Writable returns nil while the Hub can take writes, else an error wrapping
// ErrUnavailable that says why in words for /readyz: not connected to
// NATS, JetStream disabled, or the store full (ErrStoreFull). On the
// embedded server it measures the store (microseconds: counters, and one
// pass over the streams); on an external one it asks the account's usage
// (one round trip, bounded by ctx) and remembers refused writes for
// fullMemory. Safe for concurrent use.
func (h *Hub) Writable(ctx context.Context) error {
	if !h.Connected() {
		return errorf(ErrUnavailable, "not connected to NATS")
	}
	if h.srv != nil {
		if h.disk.Full() {
			return storeFull(fmt.Sprintf("the disk under it has %d bytes free", h.disk.Free()))
		}
		if h.disk.Restarting() {
			return errorf(ErrUnavailable, "JetStream is restarting")
		}
		return embeddedWritable(h.srv)
	}
	if h.store.recentlyFull(time.Now()) {
		return ErrStoreFull
	}
	info, err := gated(&h.api, func() (*jetstream.AccountInfo, error) { return h.js.AccountInfo(ctx) })
	if err != nil {
		return jetStreamUnreachable(err)
	}
	if max := info.Limits.MaxStore; max > 0 && int64(info.Store) >= max {
		return storeFull(fmt.Sprintf("%d of %d bytes used", info.Store, max))
	}
	return nil
}

// embeddedWritable measures the embedded server's store against its limit.
// JetStream refuses a message once stored bytes exceed the limit, so the
// store is full from there on.
func embeddedWritable(s *server.Server) error {
	if !s.JetStreamEnabled() {
		return errorf(ErrUnavailable, "NATS has JetStream disabled (was the disk full?)")
	}
	if s.JetStreamIsClustered() && !s.JetStreamIsCurrent() {
		return errorf(ErrUnavailable, "JetStream has no cluster leader: too few nodes reachable")
	}
	info, err := s.Jsz(&server.JSzOptions{})
	if err != nil {
		return unavailable("NATS is unavailable", fmt.Errorf("JetStream usage: %w", err))
	}
	if max := info.Config.MaxStore; max > 0 && int64(info.Store) > max {
		return storeFull(fmt.Sprintf("%d of %d bytes used", info.Store, max))
	}
	return nil
}

// jetStreamUnreachable is Writable's error where NATS is connected but
// JetStream did not answer: its reason says which way, for /readyz.
func jetStreamUnreachable(err error) error {
	cause := fmt.Errorf("JetStream account info: %w", err)
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return unavailable("JetStream does not answer: no cluster leader, or its servers unreachable", cause)
	case errors.As(err, &apiErr) && apiErr.ErrorCode == 10008:
		return unavailable("JetStream is temporarily unavailable: a cluster leader is being elected", cause)
	}
	return unavailable("NATS is unavailable", cause)
}
