package hub

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/natsconf"
)

// The users that the cluster secret's passwords belong to (natsconf).
const (
	RouteUser  = natsconf.RouteUser
	ClientUser = natsconf.ClientUser
)

// ErrClusterConfig is the class of errors in Config.Cluster.
var ErrClusterConfig = natsconf.ErrClusterConfig

// ClientPassword is the password of ClientUser on a node's client listener
// (--nats-listen) for secret.
func ClientPassword(secret string) string { return natsconf.ClientPassword(secret) }

// RoutePassword is the password of RouteUser on a node's route listener
// for secret (for a NATS server run beside the gateways in their cluster).
func RoutePassword(secret string) string { return natsconf.RoutePassword(secret) }

// clusterWait bounds how long a clustered node waits at start for the
// JetStream meta leader (a quorum of nodes up).
const clusterWait = 60 * time.Second

// waitJetStream polls AccountInfo until JetStream answers: in a cluster it
// does once a meta leader is elected (a quorum of nodes up). Bounded by
// clusterWait and ctx; returns the last error.
func waitJetStream(ctx context.Context, js jetstream.JetStream, url string) error {
	ctx, cancel := context.WithTimeout(ctx, clusterWait)
	defer cancel()
	for {
		try, cancelTry := context.WithTimeout(ctx, 2*time.Second) // an early request may get no answer at all
		err := checkJetStream(try, js, url)
		cancelTry()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// applyReplicas brings every tenant stream whose replica count differs
// from Config.Replicas to it, logging each change. A stream that cannot be
// updated (too few nodes) is logged and left as it is: it keeps working.
// One UpdateStream per stream that differs.
func (sl *streamLog) applyReplicas(ctx context.Context) {
	if !sl.cfg.replicasGiven && (sl.srv == nil || sl.cfg.Cluster.Name == "") {
		return // nothing asked for: leave the streams as they are
	}
	lctx, cancel := context.WithTimeout(ctx, replicasTimeout)
	var streams []string
	err := sl.api.do(func() error {
		names := sl.js.StreamNames(lctx)
		for name := range names.Name() {
			if t, ok := strings.CutPrefix(name, streamPrefix); ok && validName(t) {
				streams = append(streams, name)
			}
		}
		return names.Err()
	})
	if err != nil {
		sl.log.Warn("hub: replicas: listing streams", "err", err)
	}
	cancel()
	var failed []string
	for _, name := range streams {
		if !sl.applyReplicasTo(ctx, name) {
			failed = append(failed, name)
		}
	}
	if len(failed) > 0 {
		sl.wg.Add(1)
		go func() {
			defer sl.wg.Done()
			sl.retryReplicas(sl.ctx, failed)
		}()
	}
}

// replicasRetryFor is how long changes of the replica count that failed at
// start are retried: a node that restarts asks for placement on peers
// (itself among them) that the cluster sees as offline until it rejoins.
const replicasRetryFor = 2 * time.Minute

// retryReplicas retries the change of each stream in names every second
// until it succeeds, ctx ends or replicasRetryFor has passed.
func (sl *streamLog) retryReplicas(ctx context.Context, names []string) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	deadline := time.Now().Add(replicasRetryFor)
	for len(names) > 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		names = slices.DeleteFunc(names, func(name string) bool { return sl.applyReplicasTo(ctx, name) })
	}
	if len(names) > 0 {
		sl.log.Error("hub: replicas: gave up changing the streams' replicas", "streams", names, "after", replicasRetryFor)
	}
}

// replicasTimeout bounds each call of applyReplicas: a stream that does not
// answer (a permission, a lost quorum) is logged and passed over, and never
// uses up the start-up's time, which the tenants need.
const replicasTimeout = 2 * time.Second

// applyReplicasTo brings stream name to the configured replica count and
// reports whether it has it now.
func (sl *streamLog) applyReplicasTo(ctx context.Context, name string) bool {
	ctx, cancel := context.WithTimeout(ctx, replicasTimeout)
	defer cancel()
	s, err := gated(sl.api, func() (jetstream.Stream, error) { return sl.js.Stream(ctx, name) })
	if err != nil {
		sl.log.Warn("hub: replicas: stream info", "stream", name, "err", err)
		return false
	}
	cfg := s.CachedInfo().Config
	if cfg.Replicas == sl.cfg.Replicas {
		return true
	}
	from := cfg.Replicas
	cfg.Replicas = sl.cfg.Replicas
	if err := sl.api.do(func() error { _, err := sl.js.UpdateStream(ctx, cfg); return err }); err != nil {
		sl.log.Warn("hub: replicas: could not change the stream's replicas yet", "stream", name, "from", from, "to", sl.cfg.Replicas, "err", err)
		return false
	}
	sl.log.Info("hub: replicas: stream brought to the configured replicas", "stream", name, "from", from, "to", sl.cfg.Replicas)
	return true
}
