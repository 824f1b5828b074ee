// Package streamreplicas brings existing JetStream streams to a replica
// count: at a gateway's start, every tenant stream whose count differs
// from the configured one (--replicas) is updated to it, one UpdateStream
// each, and those that cannot be changed yet (too few nodes, a node that
// restarts and is still seen offline) are retried in the background for a
// while. A stream that keeps its old count keeps working: a failure is
// logged, never fatal.
//
// Its log lines keep the "hub: replicas:" prefix that docs/CLUSTERING.md
// quotes for operators. It imports nats-io only.
package streamreplicas

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Timeout bounds each JetStream call: a stream that does not answer (a
// permission, a lost quorum) is logged and passed over, and never uses up
// the start-up's time, which the tenants need.
const Timeout = 2 * time.Second

// RetryFor is how long changes that failed at start are retried: a node
// that restarts asks for placement on peers (itself among them) that the
// cluster sees as offline until it rejoins.
const RetryFor = 2 * time.Minute

// Resizer brings the streams Match accepts to Want replicas. Its methods
// may run on several goroutines at once (JetStream orders the updates).
type Resizer struct {
	JS   jetstream.JetStream
	Gate func(request func() error) error // runs each JetStream API request (hub's API gate)
	Want int
	// Match reports whether a stream of the account is one to resize (a
	// tenant's); nil means all.
	Match func(stream string) bool
	Log   *slog.Logger
}

// Apply brings every stream Match accepts to Want and returns those it
// could not change yet, to Retry. One listing and one request per stream,
// each bounded by Timeout.
func (z Resizer) Apply(ctx context.Context) (failed []string) {
	lctx, cancel := context.WithTimeout(ctx, Timeout)
	var streams []string
	err := z.Gate(func() error {
		names := z.JS.StreamNames(lctx)
		for name := range names.Name() {
			if z.Match == nil || z.Match(name) {
				streams = append(streams, name)
			}
		}
		return names.Err()
	})
	if err != nil {
		z.Log.Warn("hub: replicas: listing streams", "err", err)
	}
	cancel()
	for _, name := range streams {
		if !z.applyTo(ctx, name) {
			failed = append(failed, name)
		}
	}
	return failed
}

// Retry retries the change of each stream in names every second until it
// succeeds, ctx ends or RetryFor has passed; it logs the streams it gave
// up on.
func (z Resizer) Retry(ctx context.Context, names []string) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	deadline := time.Now().Add(RetryFor)
	for len(names) > 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		names = slices.DeleteFunc(names, func(name string) bool { return z.applyTo(ctx, name) })
	}
	if len(names) > 0 {
		z.Log.Error("hub: replicas: gave up changing the streams' replicas", "streams", names, "after", RetryFor)
	}
}

// applyTo brings stream name to Want and reports whether it has it now.
func (z Resizer) applyTo(ctx context.Context, name string) bool {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	var s jetstream.Stream
	err := z.Gate(func() (err error) { s, err = z.JS.Stream(ctx, name); return err })
	if err != nil {
		z.Log.Warn("hub: replicas: stream info", "stream", name, "err", err)
		return false
	}
	cfg := s.CachedInfo().Config
	if cfg.Replicas == z.Want {
		return true
	}
	from := cfg.Replicas
	cfg.Replicas = z.Want
	if err := z.Gate(func() error { _, err := z.JS.UpdateStream(ctx, cfg); return err }); err != nil {
		z.Log.Warn("hub: replicas: could not change the stream's replicas yet", "stream", name, "from", from, "to", z.Want, "err", err)
		return false
	}
	z.Log.Info("hub: replicas: stream brought to the configured replicas", "stream", name, "from", from, "to", z.Want)
	return true
}
