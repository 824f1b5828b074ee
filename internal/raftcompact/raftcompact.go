// Package raftcompact has the embedded NATS server compact the Raft logs of
// streams now, rather than when JetStream next does (about every two
// minutes, or when the node stops). An erasure of personal data
// (internal/shred) destroys or rewrites the messages that held it, but on a
// cluster each replica's Raft log of a stream keeps the proposals that
// wrote them until the log is compacted: installing a Raft snapshot of the
// stream (nats-server's JetStreamSnapshotStream) compacts the log to the
// entries this node has applied, so those proposals leave the disk.
//
// A follower that has not applied anything yet, or a node catching a peer
// up, refuses a snapshot for a moment: Streams retries with backoff,
// bounded by Budget. The stream's leader compacts only once no replica
// lags: a follower behind the leader's compacted log would catch up
// from a snapshot of the stream, which removes the deleted messages from
// its store without overwriting them, undoing the secure delete on that
// replica. A server that is not in a cluster has no Raft log of a
// stream and nothing to do.
package raftcompact

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// Budget bounds the attempts for one stream.
const Budget = 30 * time.Second

// Server is what compaction needs of the embedded server (*server.Server).
type Server interface {
	JetStreamSnapshotStream(account, stream string) error
	JetStreamIsStreamLeader(account, stream string) bool
}

// Compactor compacts streams' Raft logs on one embedded server in the
// background. The zero value's Server is nil: Streams does nothing.
type Compactor struct {
	Server  Server              // nil: NATS is not embedded (nothing of its disk is ours)
	JS      jetstream.JetStream // tells, on the stream's leader, whether every replica is current
	Account string              // the streams' account (server.DEFAULT_GLOBAL_ACCOUNT without accounts)
	Log     *slog.Logger        // required where Server is set
	Ctx     context.Context     // stops the attempts (the owner's close)
	WG      *sync.WaitGroup     // the owner waits for the goroutines Streams starts
	// Failed counts the streams whose compaction gave up: the owner's
	// metric (hub: natsstats' RaftCompactFailures). Nil: a count of c's own.
	Failed *atomic.Uint64
	own    atomic.Uint64
}

// Failures returns how many streams' compactions gave up since the start.
func (c *Compactor) Failures() uint64 { return c.failures().Load() }

// failures is the counter c counts into.
func (c *Compactor) failures() *atomic.Uint64 {
	if c.Failed != nil {
		return c.Failed
	}
	return &c.own
}

// Streams compacts each of streams' Raft logs on this server, in a
// goroutine owned by c.WG that stops with c.Ctx. Each stream is tried until
// it succeeds, or Budget has passed; a failure is logged and counted.
func (c *Compactor) Streams(streams ...string) {
	if c == nil || c.Server == nil || len(streams) == 0 {
		return
	}
	c.WG.Add(1)
	go func() {
		defer c.WG.Done()
		for _, s := range streams {
			c.stream(s)
		}
	}()
}

// stream compacts one stream's Raft log, retrying with backoff within Budget.
func (c *Compactor) stream(stream string) {
	ctx, cancel := context.WithTimeout(c.Ctx, Budget)
	defer cancel()
	start := time.Now()
	for wait, tries := 10*time.Millisecond, 1; ; wait, tries = min(2*wait, time.Second), tries+1 {
		err := c.compact(ctx, stream)
		switch {
		case err == nil:
			c.Log.Info("raftcompact: Raft log compacted", "stream", stream, "tries", tries, "took", time.Since(start))
			return
		case notClustered(err):
			c.Log.Debug("raftcompact: no Raft log to compact", "stream", stream, "err", err)
			return
		}
		select {
		case <-ctx.Done():
			c.failures().Add(1)
			c.Log.Warn("raftcompact: Raft log not compacted: JetStream compacts it later",
				"stream", stream, "tries", tries, "err", err)
			return
		case <-time.After(wait):
		}
	}
}

// compact snapshots stream on this server, where it is a follower or every
// follower is current.
func (c *Compactor) compact(ctx context.Context, stream string) error {
	if c.Server.JetStreamIsStreamLeader(c.Account, stream) {
		s, err := c.JS.Stream(ctx, stream)
		if err != nil {
			return err
		}
		info, err := s.Info(ctx)
		if err != nil {
			return err
		}
		if info.Cluster != nil {
			for _, r := range info.Cluster.Replicas {
				// Lag only: a restarted peer may be shown offline or not current
				// for a while although it has every entry.
				if r.Lag > 0 {
					return fmt.Errorf("replica %s lags by %d entries: it would catch up from a snapshot", r.Name, r.Lag)
				}
			}
		}
	}
	return c.Server.JetStreamSnapshotStream(c.Account, stream)
}

// notClustered reports whether err says this server keeps no Raft log of
// streams (JetStream not clustered, or not enabled).
func notClustered(err error) bool {
	var api *server.ApiError
	if !errors.As(err, &api) {
		return false
	}
	for _, id := range []server.ErrorIdentifier{server.JSClusterNotActiveErr, server.JSNotEnabledForAccountErr, server.JSNotEnabledErr} {
		if api.ErrCode == server.ApiErrors[id].ErrCode {
			return true
		}
	}
	return false
}
