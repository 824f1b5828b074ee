package loadtest

import (
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
