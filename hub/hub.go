package hub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Hub is the gateway's durable core: it publishes events to the tenants'
// streams and keeps a replica of every tenant. Create it with Start and stop
// it with Close. Safe for concurrent use.
type Hub struct {
	cfg   Config
	log   *slog.Logger
	srv   *server.Server // nil with Config.NATSURL
	nc    *nats.Conn
	js    jetstream.JetStream
	snaps *snapshotter
	store storeHealth // refused writes: store.go
	disk  diskState   // the embedded store's disk: store.go

	id   string        // prefixes waiter keys: unique per Hub
	next atomic.Uint64 // numbers waiter keys

	ctx    context.Context // ends at Close: stops the replica goroutines
	cancel context.CancelFunc
	wg     sync.WaitGroup

	feed atomic.Pointer[feedHolder] // the change feed's consumer; see feed.go

	openMu  sync.Mutex   // serialises opening tenants; taken before mu
	mu      sync.RWMutex // guards the fields below
	tenants map[string]*replica
	closed  bool
}

// Start connects to NATS (starting the embedded server unless
// cfg.NATSURL is set), opens every tenant stream it finds, loads each
// tenant's snapshot and replays the tail, and returns once every replica
// has caught up with its stream. ctx bounds the start-up only; Close stops
// the Hub. With cfg.NATSURL, a server without JetStream fails with
// ErrNoJetStream.
func Start(ctx context.Context, cfg Config) (*Hub, error) {
	cfg = cfg.withDefaults()
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("hub: data dir: %w", err)
	}
	h := &Hub{cfg: cfg, log: cfg.Logger, id: randomID(), tenants: make(map[string]*replica)}
	h.snaps = &snapshotter{dir: snapshotDir(cfg.DataDir), every: cfg.SnapshotEvery, interval: cfg.SnapshotInterval, log: h.log}
	h.snaps.removeStale()
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.runFeed(h.ctx)
	}()
	if err := h.connect(ctx); err != nil {
		h.Close()
		return nil, err
	}
	if err := h.openAll(ctx); err != nil {
		h.Close()
		return nil, err
	}
	if h.srv != nil {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.watchDisk(h.ctx, h.cfg.DataDir)
		}()
	}
	if cfg.DiscoverInterval > 0 {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.discover(h.ctx, cfg.DiscoverInterval)
		}()
	}
	h.log.Info("hub: ready", "tenants", len(h.tenants), "nats", h.natsURL())
	return h, nil
}

func (h *Hub) connect(ctx context.Context) error {
	url := h.cfg.NATSURL
	if url == "" {
		s, err := startEmbedded(h.cfg)
		if err != nil {
			return err
		}
		h.srv = s
	}
	nc, err := connect(url, h.srv, authOptions(h.cfg, h.srv != nil), h.log)
	if err != nil {
		return err
	}
	h.nc = nc
	if h.js, err = jetstream.New(nc); err != nil {
		return fmt.Errorf("hub: jetstream: %w", err)
	}
	check := checkJetStream
	if h.srv != nil && h.cfg.Cluster.Name != "" {
		check = waitJetStream
	}
	if err := check(ctx, h.js, h.natsURL()); err != nil {
		return err
	}
	h.applyReplicas(ctx)
	return nil
}

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

// openAll opens every tenant stream (RW_*) of the NATS account.
func (h *Hub) openAll(ctx context.Context) error {
	names := h.js.StreamNames(ctx)
	var tenants []string
	for name := range names.Name() {
		if t, ok := strings.CutPrefix(name, streamPrefix); ok && validName(t) {
			tenants = append(tenants, t)
		}
	}
	if err := names.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return unavailable("the log is unavailable", fmt.Errorf("list streams: %w", err))
	}
	for _, t := range tenants {
		if _, err := h.replica(ctx, t, false); err != nil {
			return err
		}
	}
	return nil
}

// Close stops the Hub in order: no new tenants, replica goroutines stopped
// and waited for (each writes its snapshot), the NATS connection drained,
// the embedded server shut down. Calls in flight fail with ErrClosed.
// Safe to call more than once.
func (h *Hub) Close() error {
	h.openMu.Lock()
	h.mu.Lock()
	already := h.closed
	h.closed = true
	h.mu.Unlock()
	h.openMu.Unlock()
	if already {
		return nil
	}
	h.cancel()
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
func (h *Hub) waiterKey() string {
	return h.id + "-" + strconv.FormatUint(h.next.Add(1), 36)
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
