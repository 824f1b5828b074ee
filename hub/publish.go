package hub

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/jserr"
	"github.com/rankwire/rankwire/internal/pace"
	"github.com/rankwire/rankwire/internal/streamwatch"
)

// Publishing through a leader change. Every event carries a JetStream
// message id (Nats-Msg-Id), its waiter key: unique per event of every Hub,
// and the same on every attempt to publish that event. JetStream stores a
// message whose id it saw within the stream's duplicate window once, and
// acknowledges the repeat as a duplicate of the first; so a publish whose
// ack was lost (a leader change between storing and answering) can be
// sent again and applies once.
//
// publish retries an attempt that failed with an error of a stream
// between leaders (no responders, a timeout, the cluster temporarily
// unavailable, the connection reconnecting) with backoff, for up to
// Config.WriteTimeout: a failover shorter than that is a slower ack. A
// stream that is gone, or JetStream refusing the message, fails at once.
// A tenant whose last write failed after the whole WriteTimeout is
// "down": its next writes make one attempt of at most downAttempt, so a
// tenant that stays unavailable answers 503 within about a second while
// every other tenant is served; its first success clears it.

const (
	attemptTimeout = 2 * time.Second        // one publish attempt
	downAttempt    = 800 * time.Millisecond // the single attempt of a tenant marked down
	firstBackoff   = 50 * time.Millisecond  // wait before the second attempt; doubles
	maxBackoff     = 1 * time.Second        // longest wait between two attempts

	// dupWindow is the tenant streams' duplicate window. It must outlast
	// the longest retry: MaxWriteTimeout.
	dupWindow = 2 * time.Minute
)

// publish publishes data to r's stream with msgID as its message id and
// returns once JetStream acknowledged it, retrying as the file comment
// says. ctx still bounds the whole. Errors: ErrClosed when ctx or the Hub
// ended, ErrStoreFull, else ErrUnavailable (the outcome is unknown: the
// caller's retry with the same idempotency id applies once). Cost: one
// round trip when NATS is well. Safe for concurrent use.
func (sl *streamLog) publish(ctx context.Context, r *replica, data []byte, msgID string) error {
	start := time.Now()
	budget := sl.cfg.WriteTimeout
	if r.down.Load() {
		budget = downAttempt
	}
	wctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	err := sl.publishLoop(wctx, r, data, msgID)
	sl.nstats.ObservePublish(time.Since(start), err)
	switch {
	case err == nil:
		sl.markUp(r)
		return nil
	case sl.ctx.Err() != nil:
		return ErrClosed
	case ctx.Err() != nil || jserr.StoreFull(err): // the caller gave up, or JetStream refused
		return sl.publishErr(err, r.stream)
	}
	sl.markDown(r, err)
	return sl.publishErr(err, r.stream)
}

// After the stream's election, a failed attempt is sent again after
// electedRetry, doubling up to electedRetryMax, instead of the backoff,
// for afterElection: nats-server
// announces a new stream leader (the advisory that ends an attempt,
// streamwatch.Elections) before that leader subscribes to the stream's
// subject, and the subscription reaches the other servers over their
// routes a moment later; an attempt sent in between meets no responders,
// and the backoff's 50 ms, then 100 ms, after it were most of a planned
// restart's write gap (the fault suite's rolling restart: writes answered
// 100–180 ms after an election of 20–60 ms). The doubling keeps a crowd
// of waiting publishes from asking some 50 times each while a slow
// subscription is on its way (at most 8 attempts in the window).
const (
	afterElection   = 250 * time.Millisecond
	electedRetry    = 5 * time.Millisecond
	electedRetryMax = 40 * time.Millisecond
)

// publishLoop makes attempts until one succeeds, one fails for good, or
// ctx ends; it returns the last attempt's error.
func (sl *streamLog) publishLoop(ctx context.Context, r *replica, data []byte, msgID string) error {
	wait, fast := firstBackoff, electedRetry
	var electedAt time.Time // when an attempt or a wait of this loop last ended at an election
	for {
		elected := sl.votes.Next(r.tenant) // ends the attempt and the backoff: the new leader is there to ask
		err := sl.publishOnce(ctx, r, data, msgID, elected)
		if err == nil || !jserr.Retryable(err) || ctx.Err() != nil {
			return err
		}
		if streamwatch.Held(elected) {
			electedAt, fast = time.Now(), electedRetry
		}
		if time.Since(electedAt) < afterElection { // it exists and has a leader: its subscription is on its way
			sl.nstats.Retries.Add(1)
			if !pace.SleepUntil(ctx, time.Now().Add(fast)) {
				return err
			}
			fast = min(2*fast, electedRetryMax)
			continue
		}
		next := time.Now().Add(wait)
		if sl.streamGone(ctx, r, wait) {
			return fmt.Errorf("%w (stream %s: not found)", err, r.stream)
		}
		sl.nstats.Retries.Add(1)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Until(next)): // the check spent part of the wait
		case <-elected:
			electedAt, fast = time.Now(), electedRetry
		}
		wait = min(2*wait, maxBackoff)
	}
}

// publishOnce is one attempt, bounded by attemptTimeout. The client's own
// retry on no responders is off: publishLoop retries, and counts. elected
// (taken just before, once for the attempt and its backoff: one lock
// fewer per publish) ends the attempt at the stream's next election.
func (sl *streamLog) publishOnce(ctx context.Context, r *replica, data []byte, msgID string, elected <-chan struct{}) error {
	actx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	var newLeader atomic.Bool
	if sl.srv == nil || sl.srv.JetStreamIsClustered() { // a lone embedded server elects nobody: no watcher
		stop := streamwatch.EndAtElection(actx, elected, func() { newLeader.Store(true); cancel() })
		defer stop()
	}
	ack, err := sl.js.Publish(actx, r.subject, data, jetstream.WithExpectStream(r.stream),
		jetstream.WithMsgID(msgID), jetstream.WithRetryAttempts(0))
	if err == nil {
		r.follow.NoteStored(ack.Sequence) // the replica's watchdog expects it (follow.go)
	}
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		if newLeader.Load() {
			sl.log.Debug("hub: publish attempt ended by a leader election; sent again", "tenant", r.tenant)
			return fmt.Errorf("publish attempt: the stream elected a leader: %w", nats.ErrTimeout)
		}
		return fmt.Errorf("publish attempt: %w", nats.ErrTimeout)
	}
	return err
}

// streamGone reports whether JetStream says r's stream does not exist (it
// was deleted): no retry brings it back. An answer that does not come
// within the backoff's wait (no leader: a handover) is not "gone", and the
// next retry asks again with a longer one: a stream between leaders leaves
// the info request unanswered, and waiting longer for it held a write up
// 800 ms after a planned restart's election (TestPlannedLeaderStop).
func (sl *streamLog) streamGone(ctx context.Context, r *replica, within time.Duration) bool {
	ictx, cancel := context.WithTimeout(ctx, min(within, downAttempt))
	defer cancel()
	err := sl.api.do(func() error {
		_, err := sl.js.Stream(ictx, r.stream)
		return err
	})
	return errors.Is(err, jetstream.ErrStreamNotFound)
}

// markDown notes that a write of r failed after its whole budget, with a
// log line when r was up.
func (sl *streamLog) markDown(r *replica, err error) {
	if !r.down.Swap(true) {
		sl.log.Warn("hub: tenant's log unavailable: its writes answer 503 at once until one succeeds",
			"tenant", r.tenant, "err", err)
	}
}

// markUp notes a write of r that succeeded, with a log line when r was down.
func (sl *streamLog) markUp(r *replica) {
	sl.store.noteOK()
	if r.down.Swap(false) {
		sl.log.Info("hub: tenant's log available again", "tenant", r.tenant)
	}
}
