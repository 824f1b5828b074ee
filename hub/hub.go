package hub

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/diskwatch"
	"github.com/rankwire/rankwire/internal/natsconf"
	"github.com/rankwire/rankwire/internal/natsstats"
	"github.com/rankwire/rankwire/internal/notify"
	"github.com/rankwire/rankwire/internal/raftcompact"
	"github.com/rankwire/rankwire/internal/shred"
	"github.com/rankwire/rankwire/internal/snapbucket"
	"github.com/rankwire/rankwire/internal/snapfile"
	"github.com/rankwire/rankwire/internal/streamreplicas"
	"github.com/rankwire/rankwire/internal/streamwatch"
)

// Hub is the gateway's durable core: it publishes events to the tenants'
// streams and keeps a replica of every tenant. Create it with Start and stop
// it with Close. Safe for concurrent use.
type Hub struct {
	cfg    Config
	log    *slog.Logger
	srv    *server.Server // nil with Config.NATSURL
	nc     *nats.Conn
	js     jetstream.JetStream
	snaps  *snapshotter
	store  storeHealth        // refused writes: store.go
	disk   diskwatch.Watch    // the embedded store's disk (internal/diskwatch)
	api    apiGate            // the Hub's JetStream API requests, kept out of a JetStream restart: apigate.go
	nstats natsstats.Counters // connection and publish counters (internal/natsstats)
	note   *notify.Notifier   // notifications (internal/notify); set by connect
	quota  quotas             // each tenant's limits that apply enforces: quota.go

	streams *streamLog // the tenants' streams: streams.go; set by connect

	ctx    context.Context // ends at Close: stops the replica goroutines
	cancel context.CancelFunc
	wg     sync.WaitGroup

	feed     atomic.Pointer[feedHolder] // the change feed's consumer; see feed.go
	feedWake chan struct{}              // capacity 1: changes wait for the feed goroutine (feed.go)

	reg *registry // the tenants: open, opening, down (tenant.go, isolate.go)
}

// Start connects to NATS (starting the embedded server unless
// cfg.NATSURL is set), opens every tenant stream it finds, loads each
// tenant's snapshot and replays the tail, and returns once every replica
// has caught up with its stream. A tenant that cannot be opened does not
// stop it: it is served once it opens (isolate.go). ctx bounds the start-up only; Close stops
// the Hub. With cfg.NATSURL, a server without JetStream fails with
// ErrNoJetStream.
func Start(ctx context.Context, cfg Config) (*Hub, error) {
	cfg = cfg.withDefaults()
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("hub: data dir: %w", err)
	}
	h := &Hub{cfg: cfg, log: cfg.Logger, feedWake: make(chan struct{}, 1)}
	h.snaps = &snapshotter{files: snapfile.In(cfg.DataDir), every: cfg.SnapshotEvery, interval: cfg.SnapshotInterval, log: h.log, agreed: cfg.Fingerprints != nil}
	h.snaps.files.RemoveStale(h.log)
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.reg = newRegistry(h.ctx, h.log, h.open)
	if cfg.Fingerprints != nil {
		cfg.Fingerprints.hub.Store(h)
	}
	h.wg.Go(func() { h.runFeed(h.ctx) })
	if err := h.connect(ctx); err != nil {
		h.Close()
		return nil, err
	}
	h.streams.shareSnapshots(ctx)
	h.streams.watchLeaders()
	var newTenants *streamwatch.Watch
	if cfg.DiscoverInterval > 0 {
		// Before the first look: a tenant created after it is announced.
		newTenants = h.reg.watchNewTenants()
	}
	if err := h.reg.openAll(ctx); err != nil {
		newTenants.Close()
		h.Close()
		return nil, err
	}
	h.wg.Go(func() { h.reg.reopenDown(h.ctx) })
	if h.srv != nil {
		h.wg.Go(func() {
			h.disk.Run(h.ctx, diskwatch.Config{Server: h.srv, Dir: h.cfg.DataDir, Hold: h.api.close, Log: h.log,
				Flush: func() error { return h.nc.FlushTimeout(callTimeout) }})
		})
	}
	h.wg.Go(func() { h.note.Run(h.ctx) })
	if cfg.DiscoverInterval > 0 {
		h.wg.Go(func() { h.reg.discover(h.ctx, cfg.DiscoverInterval, newTenants) })
	}
	h.log.Info("hub: ready", "tenants", len(h.reg.openReplicas()), "tenants_unavailable", h.DownTenants(), "nats", h.natsURL())
	return h, nil
}

// shareSnapshots opens the cluster's snapshot bucket where other nodes may
// share this NATS (an external server or cluster, or the embedded server
// in a cluster), with the tenants' replica count: snapshots are then
// stored there too, and a tenant opens from the newest of the local and the
// shared one. A lone embedded server has no one to share with. A bucket
// that cannot be opened within streamreplicas.Timeout is opened in the background
// until the Hub closes (snapbucket.Share); a tenant opening meanwhile waits
// for it up to bucketWait more (snapshotter.awaitBucket).
func (sl *streamLog) shareSnapshots(ctx context.Context) {
	if sl.srv != nil && sl.cfg.Cluster.Name == "" {
		return
	}
	sl.snaps.expectBucket(streamreplicas.Timeout + bucketWait)
	snapbucket.Share{JS: sl.js, Gate: sl.api.do, Replicas: sl.cfg.Replicas, Log: sl.log, Attempt: streamreplicas.Timeout,
		Opened: sl.snaps.openedBucket}.Start(ctx, sl.ctx, sl.wg)
}

func (h *Hub) connect(ctx context.Context) error {
	url := h.cfg.NATSURL
	if url == "" {
		s, err := startEmbedded(h.cfg)
		if err != nil {
			return err
		}
		h.srv = s
		if h.cfg.Embedded != nil {
			h.cfg.Embedded(s)
		}
	}
	nc, err := connect(url, h.srv, natsconf.AuthOptions(h.cfg.Cluster, h.cfg.NATSAuth, h.srv != nil), h.log, h.connHandlers()...)
	if err != nil {
		return err
	}
	h.nc = nc
	if h.cfg.JSDomain != "" && url != "" {
		h.js, err = jetstream.NewWithDomain(nc, h.cfg.JSDomain)
	} else {
		h.js, err = jetstream.New(nc)
	}
	if err != nil {
		return fmt.Errorf("hub: jetstream: %w", err)
	}
	check := checkJetStream
	if h.srv != nil && h.cfg.Cluster.Name != "" {
		check = waitJetStream
	}
	if err := check(ctx, h.js, h.natsURL()); err != nil {
		return err
	}
	if h.srv != nil && h.cfg.Cluster.Name != "" { // the replicas' Raft logs that held erased data (raftcompact)
		h.snaps.compact = &raftcompact.Compactor{Server: h.srv, JS: h.js, Account: server.DEFAULT_GLOBAL_ACCOUNT, Log: h.log, Ctx: h.ctx, WG: &h.wg,
			Failed: &h.nstats.RaftCompactFailures}
	}
	h.snaps.keys = shred.New(h.js, h.cfg.Replicas) // the log's and the snapshots' (members.go)
	h.streams = &streamLog{cfg: h.cfg, log: h.log, srv: h.srv, nc: h.nc, js: h.js, api: &h.api, nstats: &h.nstats,
		store: &h.store, disk: &h.disk, snaps: h.snaps, quota: &h.quota, id: cmp.Or(h.cfg.ReplicaID, randomID()), ctx: h.ctx, wg: &h.wg, keys: h.snaps.keys}
	if h.srv != nil && h.cfg.Sync <= 0 { // --sync always, embedded: an event costs an fsync (committer.go); an external server's policy is its own
		h.streams.linger = maxLinger
	}
	h.reg.streams = h.streams
	h.note = notify.New(notify.Config{JS: h.js, Gate: h.api.do, Log: h.log, Now: h.cfg.Now, Replicas: h.cfg.Replicas,
		Tenants: h.reg.notifyTenants, Keys: h.streams.keys})
	h.streams.applyReplicas(ctx)
	return nil
}

// JetStream returns the Hub's JetStream context, for the notifications'
// consumers (package webhook).
func (h *Hub) JetStream() jetstream.JetStream { return h.js }

// natsURL names the NATS server in logs: the external URL, or "in-process"
// for the embedded server, which has no URL because it listens on no port.
func (h *Hub) natsURL() string {
	if h.srv != nil && h.cfg.Cluster.Name != "" {
		return "in-process (embedded, node " + h.srv.Name() + " of cluster " + h.cfg.Cluster.Name + ")"
	}
	if h.srv != nil {
		return "in-process (embedded)"
	}
	return h.cfg.NATSURL
}

// openAll opens every tenant stream (RW_*) of the NATS account that is not
// open yet, each on its own and a few at a time (a replay is mostly
// CPU-bound): a tenant that fails to open is marked down, logged and
// retried in the background (isolate.go), and the others open. It fails
// only where the streams cannot be listed, or ctx ends.
func (g *registry) openAll(ctx context.Context) error {
	tenants, err := g.streams.listTenants(ctx)
	if err != nil {
		return err
	}
	slots := make(chan struct{}, max(4, runtime.GOMAXPROCS(0))) // a few more than cores: opening also waits on NATS
	var wg sync.WaitGroup
	for _, t := range tenants {
		if g.lookup(t) != nil || g.downErr(t) != nil { // down ones: reopenDown's
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			_ = g.tryOpen(ctx, t)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if g.ctx.Err() != nil {
		return ErrClosed
	}
	return nil
}

// listTenants returns the tenants whose stream the NATS account holds.
func (sl *streamLog) listTenants(ctx context.Context) ([]string, error) {
	var tenants []string
	err := sl.api.do(func() error {
		names := sl.js.StreamNames(ctx)
		for name := range names.Name() {
			if t, ok := strings.CutPrefix(name, streamPrefix); ok && validName(t) {
				tenants = append(tenants, t)
			}
		}
		if err := names.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
			return unavailable("the log is unavailable", fmt.Errorf("list streams: %w", err))
		}
		return nil
	})
	return tenants, err
}

// Close stops the Hub in order: no new tenants, replica goroutines stopped
// and waited for (each writes its snapshot), the NATS connection drained,
// the embedded server shut down. Calls in flight fail with ErrClosed.
// Safe to call more than once.
func (h *Hub) Close() error {
	if h.reg.shut() {
		return nil
	}
	h.cancel()            // openings in flight stop replaying
	h.reg.awaitOpenings() // none in flight now, and none starts: closed is set
	h.wg.Wait()
	if h.nc != nil {
		if err := h.nc.Drain(); err != nil {
			h.nc.Close()
		}
	}
	if h.srv != nil {
		h.srv.Shutdown()
		h.srv.WaitForShutdown()
	}
	h.log.Info("hub: closed")
	return nil
}

// waiterKey returns a key no other call of any Hub uses.
func (sl *streamLog) waiterKey() string {
	return sl.id + "-" + strconv.FormatUint(sl.next.Add(1), 36)
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
