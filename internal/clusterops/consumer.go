package clusterops

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/nats-io/nats.go/jetstream"
)

// localTries is how many consumers CreateLocal makes at most to get one
// on its own server: with three peers placed at random, (2/3)^12, about
// one call in 130, keeps a consumer elsewhere; the mean is 3 creations. A
// variable only so that a test of the placement can make that chance
// negligible (nine calls at 12 tries would fail one run in 15).
var localTries = 12

// CreateLocal creates the one-replica consumer cfg of stream and tries to
// have it live on the server named self. nats-server places a consumer of
// fewer replicas than its stream on a random active peer of the stream,
// with no say for its creator; a reader whose consumer lives on another
// server stops receiving when that server dies or pauses, although its own
// server holds every message, and learns so only when the consumer's
// heartbeats stop (a second or two: measured, a follower's kill -9 cost
// the surviving follower's replica 1.9 s in every run of the fault suite).
// A consumer on self shares only its reader's fate.
//
// So it creates the consumer, named prefix and the next value of made,
// looks where it landed (the create answer's cluster leader), and where
// that is another server creates another and then deletes the first, up
// to localTries consumers; the last one is kept wherever it landed, and so is
// the one before where a create fails: a remote consumer works, it only
// shares another server's fate. self "" (no server of our own, an external
// NATS) or a stream of one server keeps the first. Each attempt costs one
// create and each miss one delete, all bounded by ctx (a delete that fails
// leaves the consumer to its inactive threshold).
func CreateLocal(ctx context.Context, js jetstream.JetStream, stream string, cfg jetstream.ConsumerConfig,
	self, prefix string, made *atomic.Uint64) (jetstream.Consumer, error) {
	if cfg.Replicas != 1 {
		return nil, errors.New("clusterops: CreateLocal places consumers of one replica")
	}
	var prev jetstream.Consumer // a consumer that landed elsewhere, kept until another is made
	for i := 1; ; i++ {
		cfg.Name = prefix + strconv.FormatUint(made.Add(1), 10)
		cons, err := js.CreateOrUpdateConsumer(ctx, stream, cfg)
		if err != nil {
			if prev != nil {
				return prev, nil
			}
			return nil, fmt.Errorf("clusterops: consumer %s of %s: %w", cfg.Name, stream, err)
		}
		if prev != nil {
			_ = js.DeleteConsumer(ctx, stream, prev.CachedInfo().Name)
		}
		if i >= localTries || self == "" || landedOn(cons, self) {
			return cons, nil
		}
		prev = cons
	}
}

// landedOn reports whether cons lives on the server named self, or where
// it lives is not known (no cluster: there is only one server).
func landedOn(cons jetstream.Consumer, self string) bool {
	ci := cons.CachedInfo()
	return ci == nil || ci.Cluster == nil || ci.Cluster.Leader == "" || ci.Cluster.Leader == self
}
