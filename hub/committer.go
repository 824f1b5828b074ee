package hub

import (
	"context"
	"fmt"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

// Group commit. Every tenant has one committer goroutine that publishes the
// tenant's Submit calls. It takes the first call waiting and every other
// call already queued (waiting for more only as below), up to maxGroupItems
// items and maxGroupBytes, and publishes them as one ledger.EvGroup event:
// one publish, ack, store write, fsync, delivery and decode for the whole
// group. While that publish is in flight new calls queue, so the group
// size follows the load: one call when idle (no timer delays it), many
// under load, and more the longer the store takes (an fsync per message
// under --sync always: nats-server stores a stream's messages one at a
// time, so only a larger message shares an fsync). Each call encodes its
// own group on its own goroutine (ledger.EncodeGroup): the committer's
// serial path only joins bytes. The committer waits for the ack only; each call then waits for the
// replica to apply the event (read-your-writes) and takes its own group's
// results. Apply treats every group as its own batch (own board, own
// results, own error), so the event's content alone defines the outcome.
//
// Under --sync always (an event costs an fsync), where the last event
// carried several calls, the committer waits for as many, at most
// maxLinger (a fixed 1 ms: bounding it by the last round trip as well made
// smaller groups and a lower rate); a lone caller never waits. Fewer events cost
// less CPU per call: docs/BENCHMARKS.md, "Group commit that waits under
// --sync always".
//
// Other event kinds (settings, link, remove, reset, delete) are published
// by their calls directly, as before: concurrent calls of a tenant are
// ordered by the stream, in publish order, either way.

const (
	// Items in one group-committed event (a Submit call larger still goes alone); 8,000
	// was slower under --sync always: docs/BENCHMARKS.md, "Group size and the floor".
	maxGroupItems = 1000
	maxGroupBytes = 900 << 10 // encoded bytes of its groups, likewise: under NATS's default 1 MiB payload
	queueLen      = 1024      // Submit calls queued per tenant before callers block
	maxLinger     = time.Millisecond
)

// submitReq is one Submit call waiting for the committer.
type submitReq struct {
	ctx   context.Context
	items []Item
	enc   []byte      // the group, encoded by the caller (ledger.EncodeGroup)
	sent  chan ticket // buffered: the committer never blocks on it
}

// ticket tells a Submit call where its results will be: group i of the
// event f waits for, or err where the publish failed.
type ticket struct {
	f   *flight
	i   int
	err error
}

// submitGrouped queues one validated batch for r's committer and returns
// its results once the replica applied the event carrying it.
func (sl *streamLog) submitGrouped(ctx context.Context, r *replica, board string, items []Item) ([]Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	enc, err := ledger.EncodeGroup(ledger.Group{Board: board, Items: items})
	if err != nil {
		return nil, fmt.Errorf("hub: encode group: %w", err)
	}
	req := &submitReq{ctx: ctx, items: items, enc: enc, sent: make(chan ticket, 1)}
	select {
	case r.queue <- req:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-sl.ctx.Done():
		return nil, ErrClosed
	}
	var t ticket
	select {
	case t = <-req.sent:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-sl.ctx.Done():
		return nil, ErrClosed
	}
	if t.err != nil {
		return nil, t.err
	}
	if err := sl.awaitApply(ctx, r, t.f); err != nil {
		return nil, err
	}
	g := t.f.Out().Groups
	if t.i >= len(g) { // not an ledger.EvGroup outcome: cannot happen with a valid event
		return nil, errorf(ErrInternal, "event applied without group %d", t.i)
	}
	return g[t.i].Results, g[t.i].Err
}

// runCommitter publishes r's queued Submit calls in groups until ctx ends.
// Calls still queued then fail with ErrClosed through their own wait on the
// Hub's context.
func (sl *streamLog) runCommitter(ctx context.Context, r *replica) {
	var next *submitReq // a call that did not fit the last group
	var last int        // calls in the last event
	for {
		first := next
		if first == nil {
			select {
			case first = <-r.queue:
			case <-ctx.Done():
				return
			}
		}
		var reqs []*submitReq
		reqs, next = r.collect(live([]*submitReq{first}), 0, nil) // first may have waited out a publish
		if bound := sl.linger; next == nil && last > 1 && len(reqs) < last && bound > 0 {
			r.lingers.Add(1)
			wait := time.NewTimer(bound)
			reqs, next = r.collect(reqs, last, wait.C)
			wait.Stop()
			reqs = live(reqs) // contexts may have ended during the wait
		}
		if len(reqs) == 0 { // every call's context ended
			continue
		}
		sl.publishGroup(ctx, r, reqs)
		last = len(reqs)
	}
}

// collect returns reqs with the calls queued behind them that fit in one
// event, and the call that did not fit, if any; while reqs holds fewer
// than want calls and room for another item, it waits for more until wait
// fires (where wait is nil, never). Calls taken from the queue whose
// context ended are answered and dropped; those of reqs, and those taken
// before a wait, are the caller's to check after it (live): without a wait
// every call was checked as it was taken, and the hot path checks none
// twice.
func (r *replica) collect(reqs []*submitReq, want int, wait <-chan time.Time) ([]*submitReq, *submitReq) {
	items, size := 0, 0
	for _, req := range reqs {
		items, size = items+len(req.items), size+len(req.enc)
	}
	for {
		var req *submitReq
		select {
		case req = <-r.queue:
		default:
			if wait == nil || len(reqs) >= want || items >= maxGroupItems { // full: no call can join
				return reqs, nil
			}
			select {
			case req = <-r.queue:
			case <-wait:
				return reqs, nil
			}
		}
		if req.ctx.Err() != nil {
			req.sent <- ticket{err: req.ctx.Err()}
			continue
		}
		if items+len(req.items) > maxGroupItems || size+len(req.enc) > maxGroupBytes {
			return reqs, req
		}
		reqs = append(reqs, req)
		items, size = items+len(req.items), size+len(req.enc)
	}
}

// live answers the calls of reqs whose context ended (while the
// committer waited, say) and returns the others, in reqs's array.
func live(reqs []*submitReq) []*submitReq {
	out := reqs[:0]
	for _, req := range reqs {
		if err := req.ctx.Err(); err != nil {
			req.sent <- ticket{err: err}
		} else {
			out = append(out, req)
		}
	}
	return out
}

// publishGroup publishes reqs as one ledger.EvGroup event (its waiter key as its
// message id, retried through a leader change: publish.go), waits for the
// ack and hands every call its ticket. An event over the connection's payload limit
// (a server configured below the default) is split in halves.
func (sl *streamLog) publishGroup(ctx context.Context, r *replica, reqs []*submitReq) {
	ev := &ledger.Event{Kind: ledger.EvGroup, At: sl.cfg.Now().UnixMilli(), Waiter: sl.waiterKey(),
		KeepIDs: sl.cfg.IdempotencyRetention.Milliseconds(), MaxHeld: sl.quota.of(r.tenant).Held}
	groups := make([][]byte, len(reqs))
	for i, req := range reqs {
		groups[i] = req.enc
	}
	data, err := ledger.EncodeGroupEvent(ev, groups)
	if err != nil {
		fail(reqs, fmt.Errorf("hub: encode event: %w", err))
		return
	}
	if len(reqs) > 1 && int64(len(data)) > sl.nc.MaxPayload() {
		sl.publishGroup(ctx, r, reqs[:len(reqs)/2])
		sl.publishGroup(ctx, r, reqs[len(reqs)/2:])
		return
	}
	if sl.disk.Full() {
		fail(reqs, ErrStoreFull)
		return
	}
	f := r.waits.Expect(ev.Waiter)
	if err := sl.publish(ctx, r, data, ev.Waiter); err != nil {
		r.waits.Forget(ev.Waiter)
		fail(reqs, err)
		return
	}
	for i, req := range reqs {
		req.sent <- ticket{f: f, i: i}
	}
}

func fail(reqs []*submitReq, err error) {
	for _, req := range reqs {
		req.sent <- ticket{err: err}
	}
}
