package live

import "time"

// The client message rate limit (PROTOCOL.md, "Close codes") is wire's: a
// connection may send wire.MessageBurst messages at once and
// wire.MessageRate per second sustained; one past that closes it with
// 4029. A page that subscribes to its 100 views at once stays well inside;
// a client that loops does not.

// msgBucket is a token bucket of client messages. Owned by the
// connection's read loop: not safe for concurrent use. O(1).
type msgBucket struct {
	rate   float64 // tokens per second
	burst  float64
	tokens float64
	last   time.Time
}

func newMsgBucket(rate, burst int, now time.Time) *msgBucket {
	return &msgBucket{rate: float64(rate), burst: float64(burst), tokens: float64(burst), last: now}
}

// take spends one token, reporting false when none is left.
func (b *msgBucket) take(now time.Time) bool {
	if d := now.Sub(b.last).Seconds(); d > 0 {
		b.tokens = min(b.burst, b.tokens+d*b.rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
