// Package jsread reads a JetStream stream in order, message by message,
// through an ordered consumer: the one loop behind the audit's replay of a
// tenant's stream (hub's Verify), the backup's copy of every stream
// (cmd/gateway) and the notifier's seed of what it published
// (internal/notify).
//
// It may import the nats-io modules only (plus the standard library).
package jsread

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrEnded is Read's error where the stream held nothing more before fn
// was done: a fetch waited Options.MaxWait and got no message.
var ErrEnded = errors.New("jsread: the stream ended")

// Options tunes Read. The zero value reads every message from the
// stream's first, 1000 a fetch, a fetch waiting up to 5 s.
type Options struct {
	// Consumer is the ordered consumer's configuration: where it starts,
	// a subject filter, headers only.
	Consumer jetstream.OrderedConsumerConfig
	// Batch is the messages one fetch asks for. Zero means 1000.
	Batch int
	// MaxWait is how long one fetch waits for its messages; a fetch that
	// gets none in that time ends the read with ErrEnded. Zero means 5 s.
	MaxWait time.Duration
}

// Read calls fn with each message of s in stream order, and its metadata,
// until fn reports done or fails (Read returns fn's error as is), the
// stream holds nothing more (ErrEnded), or ctx ends between two fetches
// (ctx's error). Other errors say which step failed. Cost: one fetch
// request per Batch messages; it holds no lock.
func Read(ctx context.Context, s jetstream.Stream, o Options,
	fn func(m jetstream.Msg, md *jetstream.MsgMetadata) (done bool, err error)) error {
	cons, err := s.OrderedConsumer(ctx, o.Consumer)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	batchLen, wait := o.Batch, o.MaxWait
	if batchLen <= 0 {
		batchLen = 1000
	}
	if wait <= 0 {
		wait = 5 * time.Second
	}
	for {
		batch, err := cons.Fetch(batchLen, jetstream.FetchMaxWait(wait))
		if err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return fmt.Errorf("message without metadata: %w", err)
			}
			if done, err := fn(m, md); done || err != nil {
				return err
			}
		}
		// A fetch that waited its whole time is the stream's end, not a failure.
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return fmt.Errorf("fetch: %w", err)
		}
		if n == 0 {
			return ErrEnded
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
