package loadtest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// The freshness target runs from a submission's acknowledgement
// to its receipt, while the probe in the score carries the send time. Where
// the writers and the subscribers share a process (FanoutConfig's workers
// in process), the writers record when each batch sent at a given
// microsecond was acknowledged, and a subscriber that sees a probe looks
// its acknowledgement up: the report's latency "after_ack". A probe seen
// before its batch's acknowledgement was recorded counts as 0 (it arrived
// no later than the acknowledgement).
//
// Which moment is the acknowledgement differs by side, each the moment
// its client would be answered. rankwire's is the return of the HTTP
// submission (the gateway answers once JetStream stored the batch, fsynced
// under --sync always). The peer's app would answer its client once Redis
// took the write, before it reads back and publishes: its sink marks that
// moment (markAck, after the ZADD's reply) in the slot the writer passes
// in the context (withAckSlot), which puts it in the book before the
// publish; a sink that marks nothing is acknowledged when its submit
// returns.

// ackBookMax bounds the book: past it, it starts again (a run records
// Rate ÷ Batch entries a second).
const ackBookMax = 1 << 20

// ackBook maps a batch's send time (µs since the epoch) to its
// acknowledgement. Its zero value is disabled: put and lookup do nothing.
// Safe for concurrent use.
type ackBook struct {
	on atomic.Bool
	mu sync.RWMutex // guards at
	at map[int64]time.Time
}

// acks is the process's book, enabled by RunFanout for in-process workers.
var acks ackBook

// enable clears the book and starts recording.
func (b *ackBook) enable() {
	b.mu.Lock()
	b.at = make(map[int64]time.Time)
	b.mu.Unlock()
	b.on.Store(true)
}

// disable stops recording and forgets.
func (b *ackBook) disable() {
	b.on.Store(false)
	b.mu.Lock()
	b.at = nil
	b.mu.Unlock()
}

// ackSlotKey keys the context value of withAckSlot.
type ackSlotKey struct{}

// ackSlot is a batch's acknowledgement as its sink marks it: the batch's
// send time (the book's key) and, once marked, when.
type ackSlot struct {
	sent, at time.Time
}

// withAckSlot returns ctx carrying slot, for the sink to mark when it
// would answer its client (markAck).
func withAckSlot(ctx context.Context, slot *ackSlot) context.Context {
	return context.WithValue(ctx, ackSlotKey{}, slot)
}

// markAck records now in ctx's slot, where it carries one not marked
// yet, and in the book at once: the sink goes on (the peer's app to its
// publish), and a subscriber may receive the batch before it returns.
func markAck(ctx context.Context) {
	if slot, ok := ctx.Value(ackSlotKey{}).(*ackSlot); ok && slot.at.IsZero() {
		slot.at = time.Now()
		acks.put(slot.sent, slot.at)
	}
}

// put records that the batch sent at sent was acknowledged at ack.
func (b *ackBook) put(sent, ack time.Time) {
	if !b.on.Load() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.at == nil || len(b.at) >= ackBookMax {
		b.at = make(map[int64]time.Time)
	}
	b.at[sent.UnixMicro()] = ack
}

// afterAck is how long after its batch's acknowledgement a probe sent at
// sent was received at recv: 0 where it came first or the
// acknowledgement is not recorded yet; false where the book is disabled.
func (b *ackBook) afterAck(sent, recv time.Time) (time.Duration, bool) {
	if !b.on.Load() {
		return 0, false
	}
	b.mu.RLock()
	ack, ok := b.at[sent.UnixMicro()]
	b.mu.RUnlock()
	if !ok || recv.Before(ack) {
		return 0, true
	}
	return recv.Sub(ack), true
}
