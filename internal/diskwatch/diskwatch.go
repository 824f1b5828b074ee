// Package diskwatch keeps an embedded JetStream serving through a disk
// that fills under its store.
//
// A disk that fills under the embedded store (other files, or NATS's
// default limit of 75 % of the free space at start being more than is
// left) fails JetStream's own writes. Its file store then keeps failing
// every write even after space is freed, and publishes go unanswered. The
// watch notices: while the disk has less than LowDisk bytes free, Full
// reports it (the hub then fails writes fast with ErrStoreFull, and its
// Writable says the disk is full); once it has twice that again, the watch
// restarts JetStream (its streams reload from disk, repairing a torn last
// block), and writes resume with no restart of the gateway. It also
// restarts a JetStream that NATS turned off by itself.
//
// It may import the nats-io server module only (plus the standard
// library).
//
// Its log lines start "hub:", as they did when this was part of package
// hub, so that the searches docs/OPERATIONS.md and docs/CLUSTERING.md give
// operators still find them.
package diskwatch

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// LowDisk is the free space under the store below which the disk counts
// as full.
const LowDisk = 1 << 20

// every is how often the watch looks.
const every = time.Second

// Config is what a Watch needs from its owner. Server and Dir are
// required.
type Config struct {
	Server *server.Server // the embedded server whose JetStream it watches
	Dir    string         // a directory on the disk under the store
	// Hold keeps the owner's JetStream API requests out of a restart: it
	// waits for those in flight and returns the function that lets new
	// ones in again (the hub's API gate). Nil: nothing to hold.
	Hold func() (release func())
	// Flush returns once the server has read every request the owner sent
	// before (a PING on its connection: the server reads a connection in
	// order). Nil: nothing to flush.
	Flush func() error
	// Log gets a line per change of state. Nil means slog.Default().
	Log *slog.Logger
}

// Watch is what the disk watch saw. Its zero value is a disk with room;
// its methods are safe for concurrent use (atomic loads).
type Watch struct {
	full atomic.Bool  // the disk under the store is full now
	free atomic.Int64 // free bytes at the last look
	// restarting is set while the watch restarts JetStream. NATS marks
	// JetStream enabled before its API subscriptions are set up, and a
	// request in that window races inside nats-server, so writes are
	// refused until the restart has returned.
	restarting atomic.Bool
}

// Full reports whether the disk under the store is full now.
func (w *Watch) Full() bool { return w.full.Load() }

// Free returns the free bytes the last look measured.
func (w *Watch) Free() int64 { return w.free.Load() }

// Restarting reports whether the watch is restarting JetStream now.
func (w *Watch) Restarting() bool { return w.restarting.Load() }

// Run watches until ctx ends; its owner waits for it. Cost: one statfs a
// second. Where free space cannot be measured (not Linux or Darwin) it
// changes nothing.
func (w *Watch) Run(ctx context.Context, cfg Config) {
	js := cfg.Server.JetStreamConfig()
	if js == nil {
		return
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		free, err := freeBytes(cfg.Dir)
		if err != nil {
			continue // no measure, no change
		}
		w.free.Store(free)
		w.check(free, cfg, js)
	}
}

// check updates the state for free bytes and restarts JetStream once a
// full disk has room again, or where NATS turned it off.
func (w *Watch) check(free int64, cfg Config, js *server.JetStreamConfig) {
	switch {
	case free < LowDisk && !w.full.Load():
		w.full.Store(true)
		cfg.Log.Error("hub: the disk under the store is full: writes are refused until space is freed", "free_bytes", free)
	case free >= 2*LowDisk && !w.full.Load() && !cfg.Server.JetStreamEnabled():
		// NATS turned JetStream off by itself (it does on some write
		// errors): start it again.
		cfg.Log.Warn("hub: JetStream is disabled: restarting it", "free_bytes", free)
		if err := w.restart(cfg, js); err != nil {
			cfg.Log.Error("hub: restarting JetStream failed; will retry", "err", err)
		}
	case free >= 2*LowDisk && w.full.Load():
		cfg.Log.Warn("hub: the disk has room again: restarting JetStream", "free_bytes", free)
		if err := w.restart(cfg, js); err != nil {
			cfg.Log.Error("hub: restarting JetStream failed; will retry", "err", err)
			return
		}
		w.full.Store(false)
		cfg.Log.Info("hub: JetStream restarted: writes resume")
	}
}

// restart stops the embedded JetStream and starts it again with js,
// reloading every stream from disk.
func (w *Watch) restart(cfg Config, js *server.JetStreamConfig) error {
	w.restarting.Store(true)
	defer w.restarting.Store(false)
	if cfg.Hold != nil {
		release := cfg.Hold() // no request of the owner's in flight from here
		defer release()
	}
	if err := cfg.Server.ShutdownJetStream(); err != nil {
		return err
	}
	// Once the flush returns, the server has dispatched every request sent
	// before, also those whose caller gave up waiting.
	if cfg.Flush != nil {
		if err := cfg.Flush(); err != nil {
			return fmt.Errorf("flush before restarting JetStream: %w", err)
		}
	}
	c := *js
	// The running config's StoreDir ends in "jetstream", which
	// EnableJetStream appends again.
	if filepath.Base(c.StoreDir) == server.JetStreamStoreDir {
		c.StoreDir = filepath.Dir(c.StoreDir)
	}
	return cfg.Server.EnableJetStream(&c)
}
