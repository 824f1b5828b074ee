package hub

import (
	"context"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/natsconf"
	"github.com/rankwire/rankwire/internal/streamreplicas"
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
// from Config.Replicas to it (internal/streamreplicas), retrying those it
// cannot change yet on a goroutine of the streamLog's. A stream left as it
// is keeps working.
func (sl *streamLog) applyReplicas(ctx context.Context) {
	if !sl.cfg.replicasGiven && (sl.srv == nil || sl.cfg.Cluster.Name == "") {
		return // nothing asked for: leave the streams as they are
	}
	z := streamreplicas.Resizer{JS: sl.js, Gate: sl.api.do, Want: sl.cfg.Replicas, Log: sl.log,
		Match: func(name string) bool { t, ok := strings.CutPrefix(name, streamPrefix); return ok && validName(t) }}
	if failed := z.Apply(ctx); len(failed) > 0 {
		sl.wg.Go(func() { z.Retry(sl.ctx, failed) })
	}
}
