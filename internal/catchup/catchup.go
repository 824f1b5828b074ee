// Package catchup keeps a gateway from answering "does not exist" for
// something it has not applied yet. Each node of a cluster applies a
// tenant's stream at its own pace, so a board created (or a member scored)
// through one gateway may be unknown for a moment on another, or for
// seconds on a node that was paused or loaded. A read that found nothing
// asks the tenant's stream for its last sequence (one round trip, shared
// by the tenant's reads that ask at once: probe.go) and, where this node's
// replica has not applied that far, waits a bounded time for it and reads
// again. Where the replica cannot catch up in time, or the stream does not
// answer, the read answers unavailable (retryable: a client moves to
// another gateway), never not found.
//
// A write to an existing board is held the same way (Write): the hub
// refuses a board its replica does not hold before publishing anything
// (hub.Unpublished), so the write waits and, once caught up, is sent
// again; a client's retry of a write refused here is always safe.
//
// A read that finds what it looks for costs nothing more. Only the reading
// tenant's own stream is asked and waited for, so one tenant's lag neither
// delays another tenant's answers nor tells it anything.
//
// It imports hub (its reads' errors, Beat for the applied sequence and
// AwaitApplied to be woken when it grows) and
// nats.go's jetstream (to ask a stream for its last sequence), nothing of
// the API.
package catchup

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/hub"
)

// DefaultWait is how long a read that found nothing waits, at most, for the
// stream's answer and this node's replica to catch up, where New is given
// zero: well within a client's patience and its per-attempt deadline, long
// enough for a replica that is a few hundred events behind.
const DefaultWait = time.Second

// behindMsg is the client message of a read this node cannot answer yet.
const behindMsg = "this gateway has not applied its tenant's latest changes yet; retry, or ask another gateway"

// Gate holds a gateway's reads that found nothing until its replica has
// applied what the tenant's stream held when they asked. Safe for
// concurrent use; its zero value is not usable (New).
type Gate struct {
	h      *hub.Hub
	wait   time.Duration
	probes probes
	// ask returns a tenant's stream's last sequence, or errNoStream; the
	// Gate's askStream, replaced in tests only.
	ask func(ctx context.Context, tenant string) (uint64, error)

	waiting atomic.Int64  // reads waiting for the replica now
	behind  atomic.Uint64 // reads answered unavailable: the replica did not catch up in time
	looks   atomic.Uint64 // looks at the applied sequence: one per Retry, none while it waits (tests)
}

// New returns h's Gate; wait bounds each read's catch-up (zero means
// DefaultWait).
func New(h *hub.Hub, wait time.Duration) *Gate {
	if wait <= 0 {
		wait = DefaultWait
	}
	g := &Gate{h: h, wait: wait}
	g.ask = g.askStream
	return g
}

// Stats is what a Gate has done, for metrics.
type Stats struct {
	Waiting int64  // reads waiting now for this node's replica to catch up
	Behind  uint64 // reads answered unavailable since start: the replica stayed behind
}

// Stats returns the Gate's Stats. O(1), lock-free.
func (g *Gate) Stats() Stats {
	return Stats{Waiting: g.waiting.Load(), Behind: g.behind.Load()}
}

// Read calls read, a read of tenant's state on this node, and where it
// answers not found (hub.ErrNotFound), Retry. read must write nothing
// before it succeeds: it may be called twice.
func (g *Gate) Read(ctx context.Context, tenant string, read func() error) error {
	err := read()
	if !errors.Is(err, hub.ErrNotFound) {
		return err
	}
	return g.Retry(ctx, tenant, err, read)
}

// Write calls write, a write of tenant on this node (a hub call), and
// where the hub refused it before publishing anything because this
// node's replica does not hold its board (hub.Unpublished), decides as
// Retry does: that refusal where this node has applied all the tenant's
// stream held as of now, else write's answer once the replica caught up
// (the board known there: the write publishes), else unavailable. A
// refusal of apply (a member or qid unknown at the event's place in the
// stream) is the stream's answer and is never retried. A write the hub
// finds its board for costs nothing more.
func (g *Gate) Write(ctx context.Context, tenant string, write func() error) error {
	err := write()
	var u *hub.Unpublished
	if !errors.As(err, &u) {
		return err
	}
	return g.Retry(ctx, tenant, err, write)
}

// Retry decides a read of tenant that answered notFound: notFound itself
// where tenant has no stream or this node has applied all its stream held
// as of now (one round trip); else, once this node's replica caught up,
// read's new answer; else, after at most the Gate's wait, an unavailable
// hub error. ctx bounds the wait further.
func (g *Gate) Retry(ctx context.Context, tenant string, notFound error, read func() error) error {
	ctx, cancel := context.WithTimeout(ctx, g.wait)
	defer cancel()
	last, err := g.probes.last(ctx, tenant, g.ask)
	switch {
	case errors.Is(err, errNoStream):
		return notFound
	case err != nil:
		return g.stayedBehind(err)
	case g.applied(tenant) >= last:
		return notFound
	}
	g.waiting.Add(1)
	err = g.await(ctx, tenant, last)
	g.waiting.Add(-1)
	if err != nil {
		return g.stayedBehind(err)
	}
	return read()
}

// await waits until this node has applied tenant's stream up to seq, or
// ctx ends: the hub wakes it with the apply that reaches seq
// (hub.AwaitApplied), so a wait costs no look at the replica while it
// lasts, and answers as soon as the replica caught up. A tenant not open
// here yet waits until the hub's discovery has opened it: a read never
// opens one itself, with its short deadline.
func (g *Gate) await(ctx context.Context, tenant string, seq uint64) error {
	return g.h.AwaitApplied(ctx, tenant, seq)
}

// applied is this node's applied sequence of tenant (0 where it is not
// open here), counted in looks. O(1), no NATS call.
func (g *Gate) applied(tenant string) uint64 {
	g.looks.Add(1)
	return g.h.Beat(tenant).Applied
}

// stayedBehind counts a read that could not be answered in time and
// returns its unavailable error; cause is for logs only.
func (g *Gate) stayedBehind(cause error) error {
	g.behind.Add(1)
	return hub.ErrUnavailable.Sub(behindMsg, cause)
}

// errNoStream: the tenant has no stream, so nothing of it exists anywhere.
var errNoStream = errors.New("catchup: the tenant has no stream")

// askStream asks tenant's stream for its last sequence: in a cluster its
// leader answers, so the answer holds every event acknowledged to anyone
// before the question. One JetStream API request, bounded by ctx.
func (g *Gate) askStream(ctx context.Context, tenant string) (uint64, error) {
	var last uint64
	err := g.h.JetStreamAPI(func() error {
		s, err := g.h.JetStream().Stream(ctx, hub.StreamOf(tenant))
		if err == nil {
			last = s.CachedInfo().State.LastSeq
		}
		return err
	})
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return 0, errNoStream
	case err != nil:
		return 0, fmt.Errorf("catchup: stream of tenant %q: %w", tenant, err)
	}
	return last, nil
}
