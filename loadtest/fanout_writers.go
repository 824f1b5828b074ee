package loadtest

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// sink takes one batch of submissions: the gateway over HTTP, or the Redis
// peer. It returns the items acknowledged and, on failure, an error class.
// Safe for concurrent use. A sink that would answer its client before it
// returns (the peer's app, before its publish) marks that moment with
// markAck(ctx): the acknowledgement the ack book records (fanout_ack.go).
type sink interface {
	submit(ctx context.Context, items []score) (int, string)
}

// gatewaySink posts batches to the gateway.
type gatewaySink struct{ c *client }

func (g gatewaySink) submit(ctx context.Context, items []score) (int, string) {
	st, err := g.c.submit(ctx, items)
	if err != nil || st != http.StatusOK {
		return 0, classify(st, err)
	}
	return len(items), ""
}

// Shape is how the writers' rate varies over a run.
type Shape string

const (
	Steady Shape = "steady" // the rate throughout
	Spikes Shape = "spikes" // 4× the rate for the first 500 ms of every 5 s
	Ramp   Shape = "ramp"   // rising linearly from a tenth of the rate to the rate
)

// rateAt is the target submissions per second at t into a run of d.
func (s Shape) rateAt(rate float64, t, d time.Duration) float64 {
	switch s {
	case Spikes:
		if t%(5*time.Second) < 500*time.Millisecond {
			return 4 * rate
		}
	case Ramp:
		return rate * (0.1 + 0.9*min(float64(t)/float64(d), 1))
	}
	return rate
}

// writeStats counts the writers' work. Safe for concurrent use.
type writeStats struct {
	acked, late atomic.Int64
	rec         *recorder // batch latencies and errors; guarded by mu
	mu          sync.Mutex
}

// runWriters sends batches of batch probe submissions to members m0 …
// m<members-1> at the shape's rate for d with n writers, each one batch in
// flight, and returns when d has passed and the batches in flight are
// answered. A batch not taken by a free writer when due is dropped and
// counted late: the pacer never queues without bound.
func runWriters(ctx context.Context, sk sink, shape Shape, rate float64, batch, n, members int, d time.Duration, ws *writeStats) {
	jobs := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i := range n {
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i)))
		wg.Go(func() {
			items := make([]score, batch)
			for range jobs {
				t0 := time.Now()
				for k := range items {
					j := rng.IntN(members)
					items[k] = score{Member: "m" + strconv.Itoa(j), Score: probeScore(j, t0)}
				}
				slot := ackSlot{sent: t0} // marked by a sink that answers before it returns (the peer's app)
				ok, class := sk.submit(withAckSlot(context.WithoutCancel(ctx), &slot), items)
				if class == "" && slot.at.IsZero() {
					acks.put(t0, time.Now())
				}
				ws.acked.Add(int64(ok))
				ws.mu.Lock()
				if class == "" {
					ws.rec.success(time.Since(t0), ok)
				} else {
					ws.rec.fail(class)
				}
				ws.mu.Unlock()
			}
		})
	}
	pace(ctx, shape, rate, batch, d, jobs, &ws.late)
	close(jobs)
	wg.Wait()
}

// pace offers a job on jobs each time another batch is due, every 2 ms,
// until d has passed or ctx ends.
func pace(ctx context.Context, shape Shape, rate float64, batch int, d time.Duration, jobs chan<- struct{}, late *atomic.Int64) {
	start := time.Now()
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	owed, last := 0.0, start
	for ctx.Err() == nil {
		now := <-t.C
		el := now.Sub(start)
		if el >= d {
			return
		}
		owed += shape.rateAt(rate, el, d) * now.Sub(last).Seconds() / float64(batch)
		last = now
		for ; owed >= 1; owed-- {
			select {
			case jobs <- struct{}{}:
			default:
				late.Add(1)
			}
		}
	}
}

// slotScore is member j's preload score for a fan-out run: its slot's
// base (see scoreSlot), so that every probe replaces it without moving its
// rank.
func slotScore(_ *rand.Rand, j int) float64 { return float64(j) * scoreSlot }
