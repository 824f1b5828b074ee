package hub

import (
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/ledger"
)

// BenchmarkJetStreamCeiling measures what the embedded JetStream server
// acknowledges on its own: events of a submission's size (one item, about
// 100 bytes, and 100 items, about 5 KB, encoded as the gateway encodes
// them) published to a file stream with nobody consuming it, 64 in flight
// as 64 clients would keep them. It is the ceiling of the gateway's
// durable submissions per second on this machine; items/s is reported.
//
//	go test ./hub -run '^$' -bench 'JetStreamCeiling' -benchtime 20000x -count 3
func BenchmarkJetStreamCeiling(b *testing.B) {
	for _, items := range []int{1, 100} {
		b.Run("items="+strconv.Itoa(items), func(b *testing.B) {
			h := benchStream(b, 0, "CEIL", "ceil")
			ev := &ledger.Event{Kind: ledger.EvGroup, At: time.Now().UnixMilli(), Waiter: h.streams.waiterKey(), Groups: []ledger.Group{{Board: "b"}}}
			for i := range items {
				ev.Groups[0].Items = append(ev.Groups[0].Items, Item{Member: "player-" + strconv.Itoa(100000+i), Score: 12345, ID: "match-" + strconv.Itoa(i)})
			}
			data, err := ledger.EncodeEvent(ev)
			if err != nil {
				b.Fatal(err)
			}
			inflight, done := awaitAcks(64)
			start := time.Now()
			b.ResetTimer()
			for i := range b.N {
				f, err := h.js.PublishAsync("ceil", data, jetstream.WithMsgID(h.streams.id+strconv.Itoa(i)))
				if err != nil {
					b.Fatal(err)
				}
				inflight <- f
			}
			close(inflight)
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N*items)/time.Since(start).Seconds(), "items/s")
			b.ReportMetric(float64(len(data)), "B/event")
		})
	}
}

// awaitAcks returns a channel for up to k asynchronous publishes in flight
// and one that gets the first publish's error, or nil once every ack came
// and the first was closed. A goroutine awaits the acks in order; it ends
// with the first error (the publisher must stop then) or once the first
// channel is closed and drained.
func awaitAcks(k int) (chan<- jetstream.PubAckFuture, <-chan error) {
	acks := make(chan jetstream.PubAckFuture, k)
	done := make(chan error, 1)
	go func() {
		for f := range acks {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				done <- err
				return
			}
		}
		done <- nil
	}()
	return acks, done
}
