package hub

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/clusterops"
	"github.com/rankwire/rankwire/internal/ledger"
)

// Following a tenant's stream. A replica reads its stream through an ephemeral pull consumer of its
// own (AckNone, in memory, one replica), which lives on one server of the stream's peers. The consumer
// is lost when that server dies, when the server deletes it, or when its messages stop for any other
// reason; the replica must then notice within about a second and go on from the next sequence, or every
// write acknowledged in the meantime waits for an apply that never comes.
//
// So the fetcher owns its consumer's whole life: it creates a consumer that starts after the last
// sequence it handed to apply, reads it, and on any error of the iterator (a missed heartbeat, the
// consumer deleted, a gap in the consumer's delivery sequence, the connection closed) or a stall
// (below) stops it and creates another, each attempt bounded by callTimeout, with backoff between
// failed attempts. nats.go's ordered consumer waits 1 to 10 s between attempts, each up to 10 s, and
// gives the caller no say: measured, that turned a 1 s failover into a 12 s write gap.
//
// A stall: for stallAfter the fetcher has waited in Next behind a sequence known stored (acks to this
// node's writes; the stream's last, read by a readiness probe: NoteStreamLast, so a node that takes no
// writes notices too), counted from when it fell behind: an idle replica told of a write just before
// its consumer delivers it is not stalled. The watchdog stops the consumer; the fetcher replaces it.

const (
	stallAfter    = 1500 * time.Millisecond // a fetcher idle this long behind a known stored sequence is stalled
	watchEvery    = 250 * time.Millisecond  // how often the watchdog looks
	followBackoff = 100 * time.Millisecond  // first wait after a failed attempt to create a consumer; doubles
	followMaxWait = time.Second             // longest wait between two attempts
	consumerIdle  = 30 * time.Second        // the server deletes a consumer nobody pulls from after this
)

// errDeliveryGap is a consumer whose delivery sequence skipped: a message was lost between server and
// client, so the consumer is replaced.
var errDeliveryGap = errors.New("consumer delivery sequence skipped")

// follower is a replica's position in its stream, shared by its fetcher and the watchdog. All atomic.
type follower struct {
	fetched atomic.Uint64 // stream sequence last handed to apply
	stored  atomic.Uint64 // highest sequence known stored: acks to this node's writes, NoteStreamLast
	waiting atomic.Int64  // unix ns since the fetcher waits in Next; 0 while it is not waiting
	behind  atomic.Int64  // unix ns since stored passed fetched, set when a caught-up replica learns of more
	made    atomic.Uint64 // consumers created: names them; more than one means one was replaced
}

// noteStored records that the stream stored seq (this node's write, or NoteStreamLast).
func (f *follower) noteStored(seq uint64) {
	for {
		cur := f.stored.Load()
		if seq <= cur {
			return
		}
		if f.stored.CompareAndSwap(cur, seq) {
			if at := f.fetched.Load(); cur <= at && seq > at { // it was caught up: behind from now
				f.behind.Store(time.Now().UnixNano())
			}
			return
		}
	}
}

// NoteStreamLast tells tenant's replica, if open here, that its stream holds seq (cmd/gateway's prober
// reads it every 0.5 s), so that its watchdog replaces a consumer that delivers nothing behind it. O(1).
func NoteStreamLast(h *Hub, tenant string, seq uint64) {
	if r := h.reg.lookup(tenant); r != nil {
		r.follow.noteStored(seq)
	}
}

// stalled reports whether, for stallAfter, the fetcher has waited in Next and been behind a stored sequence.
func (f *follower) stalled(now time.Time) bool {
	w := f.waiting.Load()
	return w != 0 && now.UnixNano()-max(w, f.behind.Load()) > int64(stallAfter) && f.stored.Load() > f.fetched.Load()
}

// consume creates a consumer of r's stream (on this node's server where it can: clusterops.CreateLocal)
// from the sequence after the last one fetched, and starts pulling from it. Bounded by ctx.
func (sl *streamLog) consume(ctx context.Context, r *replica) (jetstream.MessagesContext, string, error) {
	cfg := jetstream.ConsumerConfig{
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: consumerIdle,
		Replicas:          1,
		MemoryStorage:     true,
	}
	if seq := r.follow.fetched.Load(); seq > 0 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = seq + 1
	}
	cons, err := gated(sl.api, func() (jetstream.Consumer, error) { // named rw_<hub>_<tenant>_<n>
		return clusterops.CreateLocal(ctx, sl.js, r.stream, cfg, sl.nc.ConnectedServerName(), "rw_"+sl.id+"_"+r.tenant+"_", &r.follow.made)
	})
	if err != nil {
		return nil, "", unavailable(logUnavailable, fmt.Errorf("consumer on %s: %w", r.stream, err))
	}
	msgs, err := cons.Messages(jetstream.PullExpiry(pullExpiry), jetstream.PullHeartbeat(pullHeartbeat),
		jetstream.WithMessagesErrOnMissingHeartbeat(true))
	if err != nil {
		return nil, "", unavailable(logUnavailable, fmt.Errorf("consume %s: %w", r.stream, err))
	}
	return msgs, cons.CachedInfo().Name, nil
}

// follow feeds evs from msgs, replacing the consumer whenever it breaks or stalls, until ctx ends; then
// it closes evs. It runs on the fetcher goroutine and owns every consumer it creates.
func (sl *streamLog) follow(ctx context.Context, r *replica, msgs jetstream.MessagesContext, name string, evs chan<- delivery) {
	defer close(evs)
	for {
		err := sl.readConsumer(ctx, r, msgs, evs)
		msgs.Stop()
		sl.dropConsumer(r, name)
		if ctx.Err() != nil {
			return
		}
		r.log.Warn("hub: replica's consumer lost; creating another", "after_seq", r.follow.fetched.Load(), "err", err)
		if msgs, name = sl.reconsume(ctx, r); msgs == nil {
			return // ctx ended
		}
		r.log.Info("hub: replica following again", "after_seq", r.follow.fetched.Load())
	}
}

// reconsume creates a consumer, retrying with backoff until one is made or ctx ends (nil).
func (sl *streamLog) reconsume(ctx context.Context, r *replica) (jetstream.MessagesContext, string) {
	wait := followBackoff
	for {
		actx, cancel := context.WithTimeout(ctx, callTimeout)
		msgs, name, err := sl.consume(actx, r)
		cancel()
		if err == nil {
			sl.nstats.ConsumerResets.Add(1)
			return msgs, name
		}
		if ctx.Err() != nil {
			return nil, ""
		}
		r.log.Debug("hub: creating a consumer failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil, ""
		case <-time.After(wait):
		}
		wait = min(2*wait, followMaxWait)
	}
}

// dropConsumer deletes a replaced consumer, bounded by callTimeout; one that cannot be deleted now
// (its server is down) is removed by the server after consumerIdle.
func (sl *streamLog) dropConsumer(r *replica, name string) {
	if sl.ctx.Err() != nil {
		return // Close: the connection drains, and the server forgets it
	}
	ctx, cancel := context.WithTimeout(sl.ctx, callTimeout)
	defer cancel()
	_ = sl.api.do(func() error { return sl.js.DeleteConsumer(ctx, r.stream, name) })
}

// readConsumer hands msgs' events to evs until its delivery fails or skips, or it stalls: it returns why.
func (sl *streamLog) readConsumer(ctx context.Context, r *replica, msgs jetstream.MessagesContext, evs chan<- delivery) error {
	stopWatch := sl.watch(ctx, r, msgs)
	defer stopWatch()
	var delivered uint64 // the consumer's own sequence of the last message
	for {
		r.follow.waiting.Store(time.Now().UnixNano())
		msg, err := msgs.Next()
		r.follow.waiting.Store(0)
		if err != nil {
			return err
		}
		md, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("message without metadata: %w", err)
		}
		if md.Sequence.Consumer != delivered+1 {
			return fmt.Errorf("%w: %d after %d", errDeliveryGap, md.Sequence.Consumer, delivered)
		}
		delivered = md.Sequence.Consumer
		seq := md.Sequence.Stream
		if seq <= r.follow.fetched.Load() {
			continue // a consumer created from an older position: already handed on
		}
		d := delivery{seq: seq, stored: md.Timestamp}
		if seq > r.applied.Load() {
			d.ev, d.err = ledger.DecodeEvent(msg.Data())
			if d.err == nil {
				if err := sl.keys.Unseal(ctx, r.tenant, d.ev); err != nil { // members.go
					return err
				}
				d.ev.Prepare() // digests off the replica goroutine
			}
		}
		select {
		case evs <- d:
		case <-ctx.Done():
			return ctx.Err()
		}
		r.follow.fetched.Store(seq)
	}
}

// watch starts the watchdog of one consumer: it stops msgs when the fetcher stalls (see the file
// comment). The returned func stops it and waits for it.
func (sl *streamLog) watch(ctx context.Context, r *replica, msgs jetstream.MessagesContext) func() {
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(watchEvery)
		defer tick.Stop()
		for {
			select {
			case <-wctx.Done():
				msgs.Stop() // unblocks Next when ctx ended
				return
			case now := <-tick.C:
				if r.follow.stalled(now) {
					r.log.Warn("hub: replica stalled behind a stored write", "fetched", r.follow.fetched.Load(),
						"stored", r.follow.stored.Load())
					msgs.Stop()
					return
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
