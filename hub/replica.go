package hub

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
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

	sinceSnap int    // events applied since the last snapshot; replica goroutine only
	snapSeq   uint64 // sequence of the last snapshot; replica goroutine only

	mu sync.RWMutex // guards st; written only by the replica goroutine
	st *state

	applied atomic.Uint64 // stream sequence of the last applied event
	lag     atomic.Int64  // ns from the last event's storing to its apply; metrics only
	done    chan struct{} // closed when the replica goroutine has returned

	waitMu   sync.Mutex // guards the fields below
	waiters  map[string]chan outcome
	seqWaits []seqWait
}

// outcome is what applying an event gave the call that published it.
type outcome struct {
	seq     uint64
	results []Result
	err     error
}

// seqWait is a caller waiting until the replica has applied seq.
type seqWait struct {
	seq uint64
	ch  chan struct{}
}

func newReplica(tenant string, st *state, log *slog.Logger, snaps *snapshotter) *replica {
	r := &replica{
		tenant:  tenant,
		stream:  streamName(tenant),
		subject: subjectName(tenant),
		log:     log.With("tenant", tenant),
		snaps:   snaps,
		st:      st,
		done:    make(chan struct{}),
		waiters: make(map[string]chan outcome),
	}
	st.feed = newFeedLog()
	r.applied.Store(st.seq)
	r.snapSeq = st.seq
	return r
}

// run applies the stream from the event after the state's sequence until ctx
// ends, then writes a final snapshot. It owns msgs and stops it.
func (r *replica) run(ctx context.Context, msgs jetstream.MessagesContext) {
	defer close(r.done)
	defer r.snapshot()
	stop := context.AfterFunc(ctx, msgs.Stop)
	defer stop()
	defer msgs.Stop()
	for {
		msg, err := msgs.Next()
		if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			return
		}
		if err != nil {
			r.log.Warn("hub: replica fetch", "err", err)
			continue
		}
		r.handle(msg)
	}
}

// handle applies one message. A message that does not decode is consumed
// and ignored, identically on every node.
func (r *replica) handle(msg jetstream.Msg) {
	md, err := msg.Metadata()
	if err != nil {
		r.log.Error("hub: message without metadata", "err", err)
		return
	}
	seq := md.Sequence.Stream
	// The wall clock feeds only the lag metric, never the state.
	r.lag.Store(int64(time.Since(md.Timestamp)))
	if seq <= r.applied.Load() {
		return // already in the snapshot
	}
	ev, derr := decodeEvent(msg.Data())
	out := outcome{seq: seq, err: derr}
	r.mu.Lock()
	if derr == nil {
		out.results, out.err = r.st.apply(seq, ev)
	} else {
		r.st.seq = seq
	}
	r.mu.Unlock()
	r.applied.Store(seq)
	if derr == nil {
		r.notify(ev.Waiter, out)
	} else {
		r.log.Warn("hub: undecodable event skipped", "seq", seq, "err", derr)
	}
	r.maybeSnapshot(seq)
}

// expect registers a waiter for the event published with key. The channel
// receives the outcome once; forget unregisters it.
func (r *replica) expect(key string) chan outcome {
	ch := make(chan outcome, 1)
	r.waitMu.Lock()
	r.waiters[key] = ch
	r.waitMu.Unlock()
	return ch
}

func (r *replica) forget(key string) {
	r.waitMu.Lock()
	delete(r.waiters, key)
	r.waitMu.Unlock()
}

// notify hands out to the waiter for key, if any, and releases the callers
// waiting for sequences up to out.seq. O(waiting callers of waitApplied).
func (r *replica) notify(key string, out outcome) {
	r.waitMu.Lock()
	defer r.waitMu.Unlock()
	if ch := r.waiters[key]; ch != nil && key != "" {
		ch <- out
		delete(r.waiters, key)
	}
	kept := r.seqWaits[:0]
	for _, w := range r.seqWaits {
		if w.seq <= out.seq {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	r.seqWaits = kept
}

// waitApplied blocks until the replica has applied seq, ctx ends or the
// replica stops.
func (r *replica) waitApplied(ctx context.Context, seq uint64) error {
	r.waitMu.Lock()
	if r.applied.Load() >= seq {
		r.waitMu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	r.seqWaits = append(r.seqWaits, seqWait{seq, ch})
	r.waitMu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-r.done:
		return ErrClosed
	}
}
