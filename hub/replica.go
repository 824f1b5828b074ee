package hub

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rankwire/rankwire/internal/applywait"
	"github.com/rankwire/rankwire/internal/failpoint"
	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/notify"
	"github.com/rankwire/rankwire/internal/streamfollow"
)

// replica is one tenant's replicated state and the goroutine that applies the
// tenant's stream to it. The goroutine is the only writer of st; readers take
// mu's read lock for one read.
type replica struct {
	tenant  string
	stream  string
	subject string
	log     *slog.Logger
	snaps   *snapshotter

	sinceSnap int           // events applied since the last snapshot; replica goroutine only
	erased    bool          // an erasure was applied since the last snapshot: the next is due now; replica goroutine only
	rebuilt   bool          // a rebuilt state was adopted: its snapshot is due now (fingerprints.go); replica goroutine only
	resnap    atomic.Bool   // the saver could not write an erasure's snapshot (its seal failed): the next event's is due
	snapAt    time.Time     // when the last snapshot was taken; replica goroutine only
	saves     chan snapJob  // to the saver goroutine; capacity 1, see maybeSnapshot
	saving    atomic.Bool   // a snapshot is on its way to the file
	savedSeq  atomic.Uint64 // sequence of the last snapshot written
	savedAt   atomic.Int64  // unix ns of the last snapshot written, or of the start (metrics: Quotas.Gauges)
	startSeq  uint64        // sequence of the snapshot it started from; set before it runs

	mu    sync.RWMutex // guards st; written only by the replica goroutine
	st    *ledger.State
	notes *notify.Tenant // hears what apply decides (quarantines, amendments, schedule); set before run
	wake  func()         // tells the Hub's feed goroutine that changes may wait (feed.go); may be nil

	feedDirty atomic.Bool // set by wake, taken by a drain: st may hold changes for the feed (feed.go)

	voiding atomic.Bool   // a void is being planned (disputes.go): one at a time per tenant
	applied atomic.Uint64 // stream sequence of the last applied event
	lag     atomic.Int64  // ns from the last event's storing to its apply; metrics only
	done    chan struct{} // closed when the replica goroutine has returned

	follow streamfollow.Position // the fetcher's position in the stream (follow.go)
	fp     fpState               // checkpoints and a diverged copy's rebuild (fingerprints.go)

	queue   chan *submitReq // Submit calls for the committer (committer.go)
	lingers atomic.Uint64   // events the committer waited for more calls before publishing
	down    atomic.Bool     // the last write failed after its whole budget (publish.go)

	waits applywait.Set[ledger.Outcome] // the calls waiting for an event's apply, or for a sequence
}

// flight is a published event awaiting its apply (internal/applywait).
type flight = applywait.Flight[ledger.Outcome]

func newReplica(tenant string, st *ledger.State, log *slog.Logger, snaps *snapshotter) *replica {
	r := &replica{
		tenant:  tenant,
		stream:  streamName(tenant),
		subject: subjectName(tenant),
		log:     log.With("tenant", tenant),
		snaps:   snaps,
		st:      st,
		done:    make(chan struct{}),
		queue:   make(chan *submitReq, queueLen),
	}
	r.prepareState(st)
	r.applied.Store(st.Seq())
	r.waits.Applied(st.Seq(), "", ledger.Outcome{})
	r.follow.Start(st.Seq())
	r.savedSeq.Store(st.Seq())
	r.savedAt.Store(time.Now().UnixNano())
	r.startSeq = st.Seq()
	r.snapAt = time.Now()
	r.saves = make(chan snapJob, 1)
	return r
}

// prepareState sets st up as r's state (at start, or rebuilt).
func (r *replica) prepareState(st *ledger.State) {
	st.RecordFeed()
	st.SetMaxMembers(maxMembers)
	st.SetLanes(runLanes)
	// Apply releases the write lock every few items (State.SetYield):
	// sync.RWMutex lets the readers already waiting in before the writer
	// takes it again, so a read waits for one slice, not a whole event.
	// Readers may see a prefix of a batch; every item bumps its window's
	// seq, and the feed records each change under the same lock, so what a
	// reader or the feed sees is always a state some prefix produced.
	st.SetYield(func() {
		r.mu.Unlock()
		r.mu.Lock()
	})
}

// run applies the stream from the event after the state's sequence until ctx
// ends, then writes a final snapshot. It owns the fetcher goroutine, which
// runs fetch (follow.go: it reads the stream, decodes events ahead of
// apply, and closes evs once ctx ended), and the saver goroutine
// (snapshot.go).
func (r *replica) run(ctx context.Context, fetch func(evs chan<- delivery)) {
	defer close(r.done)
	var saver sync.WaitGroup
	saver.Go(func() { r.saveLoop(r.saves) })
	defer r.finalSnapshot()
	defer saver.Wait()
	defer close(r.saves)
	evs := make(chan delivery, fetchAhead)
	var fetcher sync.WaitGroup
	defer fetcher.Wait()
	fetcher.Go(func() { fetch(evs) })
	for {
		select {
		case d, ok := <-evs:
			if !ok {
				return
			}
			if ctx.Err() == nil {
				r.handle(d)
			}
		case a := <-r.fp.adopt: // nil, never ready, unless fingerprinting is on
			r.adoptRebuilt(a)
		}
	}
}

// fetchAhead is how many decoded events may wait for apply.
const fetchAhead = 64

// delivery is one stream message, decoded ahead of apply.
type delivery struct {
	seq    uint64
	stored time.Time // JetStream's timestamp: the lag metric and the age of a notification, never the state
	ev     *ledger.Event
	err    error // the event did not decode
}

// handle applies one event. An event that does not decode is consumed and
// ignored, identically on every node.
func (r *replica) handle(d delivery) {
	seq := d.seq
	// The wall clock feeds only the lag metric, never the state.
	r.lag.Store(int64(time.Since(d.stored)))
	if seq <= r.applied.Load() {
		return // already in the snapshot
	}
	out := ledger.Outcome{Seq: seq, Err: d.err}
	r.mu.Lock()
	if d.err == nil {
		out = r.st.Apply(seq, d.ev)
		failpoint.AfterApply(r.log, r.tenant, seq, r.st) // a test build's fault (internal/failpoint); nothing otherwise
	} else {
		r.st.Skip(seq)
	}
	r.mu.Unlock()
	r.applied.Store(seq)
	cp := r.checkpoint(seq) // fingerprints.go; st's encoding at seq and its hash where it took one
	r.notes.Applied(&out, d.stored)
	key := ""
	if d.err == nil {
		r.erased = r.erased || d.ev.Kind == ledger.EvErase && out.Err == nil // snapshot.go
		key = d.ev.Waiter
	} else {
		r.log.Warn("hub: undecodable event skipped", "seq", seq, "err", d.err)
	}
	r.waits.Applied(seq, key, out) // the caller that published it, and those waiting for seq
	// After the waiter: its answer goes before the push.
	if r.wake != nil {
		r.wake()
	}
	r.maybeSnapshot(cp)
}

// hasBoard reports whether r's state holds board. Read lock.
func (r *replica) hasBoard(board string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.st.HasBoard(board)
}

// read calls fn with r's state under r's read lock, for one short read.
func (r *replica) read(fn func(st *ledger.State) error) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return fn(r.st)
}

// waitApplied blocks until the replica has applied seq, ctx ends or the
// replica stops (ErrClosed). Woken by the apply that reaches seq
// (internal/applywait); ErrUnavailable where too many calls wait.
func (r *replica) waitApplied(ctx context.Context, seq uint64) error {
	err := r.waits.Wait(ctx, seq, r.done)
	switch {
	case errors.Is(err, applywait.ErrStopped):
		return ErrClosed
	case errors.Is(err, applywait.ErrTooMany):
		return unavailable("too many requests wait for this node to catch up with the tenant's log", err)
	}
	return err
}
