// Package streamfollow follows one JetStream stream for a replica: it
// reads the stream through an ephemeral pull consumer of its own (AckNone,
// in memory, one replica), which lives on one server of the stream's
// peers. The consumer is lost when that server dies, when the server
// deletes it, or when its messages stop for any other reason; the replica
// must then notice within about a second and go on from the next
// sequence, or every write acknowledged in the meantime waits for an
// apply that never comes.
//
// So a Follower owns its consumer's whole life: it creates a consumer
// that starts after the last sequence it handed on, reads it, and on any
// error of the iterator (a missed heartbeat, the consumer deleted, a gap
// in the consumer's delivery sequence, the connection closed) or a stall
// (below) stops it and creates another, each attempt bounded by
// Follower.Attempt, with backoff between failed attempts. nats.go's
// ordered consumer waits 1 to 10 s between attempts, each up to 10 s, and
// gives the caller no say: measured, that turned a 1 s failover into a
// 12 s write gap.
//
// A stall: for stallAfter the fetcher has waited in Next behind a
// sequence known stored (Position.NoteStored: acks to this node's writes;
// the stream's last, read by a readiness probe, so a node that takes no
// writes notices too), counted from when it fell behind: an idle replica
// told of a write just before its consumer delivers it is not stalled. A
// watchdog goroutine per consumer stops it; the follower replaces it.
//
// The hub owns a Follower per replica and runs it on the replica's
// fetcher goroutine; what a message means (decoding, apply) is the hub's.
// It imports nats.go's jetstream and internal/clusterops only.
package streamfollow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/clusterops"
)

// The consumer's pull: each pull request lives pullExpiry, and the server
// sends a heartbeat every pullHeartbeat while it has nothing to deliver.
// Two missed heartbeats make the follower replace its consumer on
// whichever server now leads the stream, so a replica notices a leader
// change or a lost consumer in about a second, not the library's default
// ten (a 5 s heartbeat on a 30 s pull). Cost: about 2.5 small messages a
// second per idle stream.
const (
	pullExpiry    = 2 * time.Second
	pullHeartbeat = 500 * time.Millisecond
)

const (
	stallAfter    = 1500 * time.Millisecond // a fetcher idle this long behind a known stored sequence is stalled
	watchEvery    = 250 * time.Millisecond  // how often the watchdog looks
	followBackoff = 100 * time.Millisecond  // first wait after a failed attempt to create a consumer; doubles
	followMaxWait = time.Second             // longest wait between two attempts
	consumerIdle  = 30 * time.Second        // the server deletes a consumer nobody pulls from after this
)

// errDeliveryGap is a consumer whose delivery sequence skipped: a message
// was lost between server and client, so the consumer is replaced.
var errDeliveryGap = errors.New("consumer delivery sequence skipped")

// Deliver hands one message of the stream on, in stream order: its stream
// sequence, when the stream stored it, and its data. It blocks while the
// receiver is behind, and fails only where ctx ended or the message cannot
// be handled (the consumer is then replaced, and the message delivered
// again).
type Deliver func(ctx context.Context, seq uint64, stored time.Time, data []byte) error

// Follower follows one stream from its Position on. Its fields are set
// before Consume and then only read.
type Follower struct {
	JS      jetstream.JetStream
	Gate    func(request func() error) error // every JetStream API request passes it (the hub's API gate)
	Stream  string
	Server  func() string  // the server this process is connected to: the consumer is made there where it can
	Prefix  string         // of the consumers' names (Prefix + a number): unique per process and stream
	Pos     *Position      // where it stands; shared with the writers that learn of stored sequences
	Log     *slog.Logger   // the replica's
	Resets  *atomic.Uint64 // counts consumers replaced; nil: not counted
	Attempt time.Duration  // bounds each attempt to create or delete a consumer; zero means 1 s
}

// Consume creates a consumer of the stream (on this process's server where
// it can: clusterops.CreateLocal) from the sequence after the last one
// handed on, and starts pulling from it; it returns the pull and the
// consumer's name, for Run. Bounded by ctx.
func (f *Follower) Consume(ctx context.Context) (jetstream.MessagesContext, string, error) {
	cfg := jetstream.ConsumerConfig{
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: consumerIdle,
		Replicas:          1,
		MemoryStorage:     true,
	}
	if seq := f.Pos.Fetched(); seq > 0 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = seq + 1
	}
	var cons jetstream.Consumer
	err := f.Gate(func() (err error) {
		cons, err = clusterops.CreateLocal(ctx, f.JS, f.Stream, cfg, f.Server(), f.Prefix, &f.Pos.made)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("consumer on %s: %w", f.Stream, err)
	}
	msgs, err := cons.Messages(jetstream.PullExpiry(pullExpiry), jetstream.PullHeartbeat(pullHeartbeat),
		jetstream.WithMessagesErrOnMissingHeartbeat(true))
	if err != nil {
		return nil, "", fmt.Errorf("consume %s: %w", f.Stream, err)
	}
	return msgs, cons.CachedInfo().Name, nil
}

// Run hands every message of msgs (from Consume, named name) to deliver,
// replacing the consumer whenever it breaks or stalls, until ctx ends. It
// owns every consumer it creates, and deletes each one it replaces.
func (f *Follower) Run(ctx context.Context, msgs jetstream.MessagesContext, name string, deliver Deliver) {
	for {
		err := f.read(ctx, msgs, deliver)
		msgs.Stop()
		f.drop(ctx, name)
		if ctx.Err() != nil {
			return
		}
		f.Log.Warn("hub: replica's consumer lost; creating another", "after_seq", f.Pos.Fetched(), "err", err)
		if msgs, name = f.reconsume(ctx); msgs == nil {
			return // ctx ended
		}
		f.Log.Info("hub: replica following again", "after_seq", f.Pos.Fetched())
	}
}

// attempt is Attempt or its default.
func (f *Follower) attempt() time.Duration {
	if f.Attempt <= 0 {
		return time.Second
	}
	return f.Attempt
}

// reconsume creates a consumer, retrying with backoff until one is made
// or ctx ends (nil).
func (f *Follower) reconsume(ctx context.Context) (jetstream.MessagesContext, string) {
	wait := followBackoff
	for {
		actx, cancel := context.WithTimeout(ctx, f.attempt())
		msgs, name, err := f.Consume(actx)
		cancel()
		if err == nil {
			if f.Resets != nil {
				f.Resets.Add(1)
			}
			return msgs, name
		}
		if ctx.Err() != nil {
			return nil, ""
		}
		f.Log.Debug("hub: creating a consumer failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil, ""
		case <-time.After(wait):
		}
		wait = min(2*wait, followMaxWait)
	}
}

// drop deletes a replaced consumer, bounded by Attempt; one that cannot be
// deleted now (its server is down) is removed by the server after
// consumerIdle. Once ctx ended (the owner closes) it does nothing: the
// connection drains, and the server forgets the consumer.
func (f *Follower) drop(ctx context.Context, name string) {
	if ctx.Err() != nil {
		return
	}
	dctx, cancel := context.WithTimeout(ctx, f.attempt())
	defer cancel()
	_ = f.Gate(func() error { return f.JS.DeleteConsumer(dctx, f.Stream, name) })
}

// read hands msgs' messages to deliver until its delivery fails or
// skips, or it stalls: it returns why.
func (f *Follower) read(ctx context.Context, msgs jetstream.MessagesContext, deliver Deliver) error {
	stopWatch := f.watch(ctx, msgs)
	defer stopWatch()
	var delivered uint64 // the consumer's own sequence of the last message
	for {
		f.Pos.waiting.Store(time.Now().UnixNano())
		msg, err := msgs.Next()
		f.Pos.waiting.Store(0)
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
		if seq <= f.Pos.Fetched() {
			continue // a consumer created from an older position: already handed on
		}
		if err := deliver(ctx, seq, md.Timestamp, msg.Data()); err != nil {
			return err
		}
		f.Pos.fetched.Store(seq)
	}
}

// watch starts the watchdog of one consumer: it stops msgs when the
// fetcher stalls (see the package doc). The returned func stops it and
// waits for it.
func (f *Follower) watch(ctx context.Context, msgs jetstream.MessagesContext) func() {
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
				if f.Pos.stalled(now) {
					f.Log.Warn("hub: replica stalled behind a stored write", "fetched", f.Pos.Fetched(), "stored", f.Pos.Stored())
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
