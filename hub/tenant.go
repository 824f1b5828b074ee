package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/jserr"
	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/names"
	"github.com/rankwire/rankwire/internal/notify"
)

const streamPrefix = "RW_"

func streamName(tenant string) string  { return streamPrefix + tenant }
func subjectName(tenant string) string { return "rw." + tenant + ".ev" }

func validName(s string) bool { return names.Valid(s) }

func checkNames(tenant, board string) error {
	if !validName(tenant) {
		return errorf(ErrBadRequest, "tenant %q: not a valid name", tenant)
	}
	if board != "" && !validName(board) {
		return errorf(ErrBadRequest, "board: %q is not a valid name", board)
	}
	return nil
}

// registry is the Hub's set of tenants: the open replicas, the openings
// in flight (one per tenant, shared by its callers) and the tenants that
// failed to open (isolate.go). Lock order: openMu, then mu, then a
// replica's locks. No lock is held across a NATS round trip except
// openMu's read lock, which each opening holds so that Close can wait for
// them.
type registry struct {
	openMu sync.RWMutex // read-held by each opening in flight, write-held by Close to wait for them; taken before mu

	mu       sync.RWMutex        // guards the fields below
	openHook func(tenant string) // tests only: called as a tenant's opening starts
	tenants  map[string]*replica
	opened   chan struct{}          // closed and replaced as each replica is registered: AwaitApplied
	opening  map[string]*openCall   // tenants being opened
	down     map[string]*downTenant // listed tenants that failed to open: isolate.go
	closed   bool

	// Set at construction (streams: at connect), then only read.
	streams *streamLog
	log     *slog.Logger
	ctx     context.Context // the Hub's: ends at Close
	open    func(ctx context.Context, tenant string, create bool) (*replica, error)
}

func newRegistry(ctx context.Context, log *slog.Logger, open func(context.Context, string, bool) (*replica, error)) *registry {
	return &registry{tenants: map[string]*replica{}, opened: make(chan struct{}), opening: map[string]*openCall{},
		down: map[string]*downTenant{}, log: log, ctx: ctx, open: open}
}

// shut marks the registry closed, so that no opening starts, and reports
// whether it was already.
func (g *registry) shut() (already bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	already, g.closed = g.closed, true
	return already
}

// awaitOpenings waits for the openings in flight (shut first: none starts
// after it).
func (g *registry) awaitOpenings() {
	g.openMu.Lock()
	g.openMu.Unlock() // an empty critical section: waiting is the point
}

// lookup returns the open replica of tenant, or nil. O(1), read lock only.
func (g *registry) lookup(tenant string) *replica {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.tenants[tenant]
}

// lookupOrOpened returns the open replica of tenant, or nil and a channel
// closed when the next replica is registered. O(1), read lock only.
func (g *registry) lookupOrOpened(tenant string) (*replica, <-chan struct{}) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.tenants[tenant], g.opened
}

// openReplicas returns the open replicas, in no order. O(tenants), read
// lock only.
func (g *registry) openReplicas() []*replica {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return slices.Collect(maps.Values(g.tenants))
}

// notifyTenants returns the notifier's handles of the open replicas.
func (g *registry) notifyTenants() []*notify.Tenant {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]*notify.Tenant, 0, len(g.tenants))
	for _, r := range g.tenants {
		out = append(out, r.notes)
	}
	return out
}

// replica returns tenant's replica, opening it (and with create, creating
// its stream) on first use. Opening loads the snapshot and waits until the
// replica has caught up with the stream. A tenant that failed to open
// answers its error at once while it is down (isolate.go).
func (h *Hub) replica(ctx context.Context, tenant string, create bool) (*replica, error) {
	if r := h.reg.lookup(tenant); r != nil {
		return r, r.fp.err(r.applied.Load()) // a diverged or catching-up copy serves nothing (fingerprints.go)
	}
	if err := h.reg.downErr(tenant); err != nil {
		return nil, err
	}
	return h.reg.openOnce(ctx, tenant, create)
}

// openCall is one tenant's opening in progress: callers asking for the
// same tenant meanwhile wait for done and take its outcome.
type openCall struct {
	done chan struct{}
	r    *replica
	err  error
}

// openOnce opens tenant unless it is open or the Hub closed. Different
// tenants open concurrently, each on its caller's goroutine; callers of
// one tenant share its single opening. A caller that may create the
// tenant does not take a "not found" from a caller that may not: it opens
// again itself.
func (g *registry) openOnce(ctx context.Context, tenant string, create bool) (*replica, error) {
	for {
		g.mu.Lock()
		r, closed, call := g.tenants[tenant], g.closed, g.opening[tenant]
		if closed || r != nil {
			g.mu.Unlock()
			if closed {
				return nil, ErrClosed
			}
			return r, nil
		}
		if call == nil {
			call = &openCall{done: make(chan struct{})}
			g.opening[tenant] = call
			g.mu.Unlock()
			return g.runOpen(ctx, tenant, create, call)
		}
		g.mu.Unlock()
		select {
		case <-call.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if call.err == nil || !create || !errors.Is(call.err, ErrNotFound) {
			return call.r, call.err
		}
	}
}

// runOpen opens tenant for call and hands its outcome to call's waiters.
// It holds openMu's read lock, so that Close, which takes the write lock
// after marking the Hub closed, waits for openings in flight and no
// replica starts after Close waited for the replicas.
func (g *registry) runOpen(ctx context.Context, tenant string, create bool, call *openCall) (*replica, error) {
	g.openMu.RLock()
	defer g.openMu.RUnlock()
	g.mu.RLock()
	closed := g.closed
	g.mu.RUnlock()
	if closed {
		call.err = ErrClosed
	} else {
		g.mu.RLock()
		hook := g.openHook
		g.mu.RUnlock()
		if hook != nil {
			hook(tenant)
		}
		call.r, call.err = g.open(ctx, tenant, create)
	}
	g.mu.Lock()
	if call.r != nil {
		g.tenants[tenant] = call.r // even on err: it keeps catching up, and Close stops it
		close(g.opened)
		g.opened = make(chan struct{})
	}
	delete(g.opening, tenant)
	g.mu.Unlock()
	close(call.done)
	return call.r, call.err
}

// open starts tenant's replica and waits until it has caught up with the
// stream. Called by the registry's runOpen only, which registers it. Each
// NATS call is bounded by callTimeout, the replay by ctx only. A snapshot
// that does not decode, or is ahead of the stream (the stream was
// recreated), is ignored.
func (h *Hub) open(ctx context.Context, tenant string, create bool) (*replica, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout) // each call: a stream without a leader fails in time
	defer cancel()
	stream, err := h.streams.stream(cctx, tenant, create)
	if err != nil {
		return nil, err
	}
	info, err := gated(&h.api, func() (*jetstream.StreamInfo, error) { return stream.Info(cctx) })
	if err != nil {
		return nil, unavailable(logUnavailable, fmt.Errorf("stream info %s: %w", streamName(tenant), err))
	}
	st, err := h.snaps.load(ctx, tenant)
	if err == nil && st.Seq() > info.State.LastSeq {
		err = fmt.Errorf("%w: snapshot at %d, stream ends at %d", ErrCorrupt, st.Seq(), info.State.LastSeq)
	}
	if err != nil {
		h.log.Warn("hub: snapshot ignored, replaying the whole stream", "tenant", tenant, "err", err)
		st = ledger.New()
	}
	r := newReplica(tenant, st, h.log, h.snaps)
	r.sinceSnap = int(st.Seq() % uint64(max(h.snaps.every, 1))) // the next snapshot by count falls on a multiple (maybeSnapshot)
	r.fp.init(h.cfg.Fingerprints, info.State.LastSeq, h.ctx.Done())
	r.notes = h.note.Tenant(tenant, r.read)
	r.wake = func() { h.wakeFeedFor(r) }
	sctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := h.startReplica(sctx, r); err != nil {
		return nil, err
	}
	return r, r.waitApplied(ctx, info.State.LastSeq) // runOpen registers r even on err
}

// stream returns tenant's stream, creating it where create allows.
func (sl *streamLog) stream(ctx context.Context, tenant string, create bool) (jetstream.Stream, error) {
	s, err := gated(sl.api, func() (jetstream.Stream, error) { return sl.js.Stream(ctx, streamName(tenant)) })
	if errors.Is(err, jetstream.ErrStreamNotFound) && !create {
		return nil, errorf(ErrNotFound, "tenant %q", tenant)
	}
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s, err = gated(sl.api, func() (jetstream.Stream, error) {
			return sl.js.CreateStream(ctx, jetstream.StreamConfig{
				Name:       streamName(tenant),
				Subjects:   []string{subjectName(tenant)},
				Storage:    jetstream.FileStorage,
				Retention:  jetstream.LimitsPolicy,
				DenyDelete: true,
				DenyPurge:  true,
				Duplicates: dupWindow, // covers publish's retries: publish.go
				Replicas:   sl.cfg.Replicas,
			})
		})
	}
	if err != nil && jserr.StoreFull(err) {
		return nil, sl.publishErr(err, streamName(tenant))
	}
	if err != nil {
		return nil, unavailable(logUnavailable, fmt.Errorf("stream %s: %w", streamName(tenant), err))
	}
	return s, nil
}

// startReplica starts r's goroutine on a consumer from the event after r's
// snapshot, and r's committer. Both stop when the Hub closes. The first
// consumer is made here, bounded by ctx, so that a tenant whose stream
// cannot be read fails to open at once.
func (h *Hub) startReplica(ctx context.Context, r *replica) error {
	f := h.streams.follower(r)
	msgs, name, err := f.Consume(ctx)
	if err != nil {
		return unavailable(logUnavailable, err)
	}
	h.wg.Add(2)
	go func() {
		defer h.wg.Done()
		r.run(h.ctx, func(evs chan<- delivery) {
			defer close(evs)
			f.Run(h.ctx, msgs, name, h.streams.deliver(r, evs))
		})
	}()
	go func() {
		defer h.wg.Done()
		h.streams.runCommitter(h.ctx, r)
	}()
	return nil
}
