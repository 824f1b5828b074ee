// Package scheduler fires the tenants' schedules of tournament boards: a
// ticker that, every second, asks the hub which occurrences are due
// (hub.Schedules.Due, a pure function of each tenant's state and the
// time) and publishes each one's event (hub.Schedules.Fire). Every node
// runs one: the event's message id is the same on every node, so JetStream
// stores one copy, and apply creates each occurrence's board at most once
// whatever copies arrive (internal/ledger/schedule_state.go). The ticker
// holds no state that matters: a node that restarts, or misses a tick,
// fires what is still due at its next one.
//
// It imports hub only; nothing imports it but cmd/gateway (and tests).
package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rankwire/rankwire/hub"
)

// Config configures a Ticker. Zero values work but Schedules.
type Config struct {
	Schedules hub.Schedules
	Tick      time.Duration    // between two passes; zero means one second
	Now       func() time.Time // the clock; nil means time.Now
	Logger    *slog.Logger     // nil means slog.Default()
}

// fireTimeout bounds one publish; a firing that did not complete is
// retried at the next pass while it is still due.
const fireTimeout = 5 * time.Second

// recentFor is how long a firing this node published is not published
// again: long enough for the local replica to apply it (after which it is
// no longer due), short enough that a lost one is retried soon.
const recentFor = 10 * time.Second

// Ticker fires due occurrences until Close. Its goroutine is its own.
type Ticker struct {
	cfg    Config
	cancel context.CancelFunc
	wg     sync.WaitGroup
	passes atomic.Uint64
	fired  atomic.Uint64
	failed atomic.Uint64
	recent map[string]time.Time // firings published, by message id: ticker goroutine only
}

// Start starts a Ticker's goroutine; Close stops it.
func Start(cfg Config) *Ticker {
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Ticker{cfg: cfg, cancel: cancel, recent: map[string]time.Time{}}
	t.wg.Go(func() { t.run(ctx) })
	return t
}

// Close stops the ticker and waits for its goroutine, a publish in flight
// included (bounded by fireTimeout).
func (t *Ticker) Close() {
	t.cancel()
	t.wg.Wait()
}

// Fired returns the firings this node published (stored, or dropped by
// JetStream as another node's duplicate).
func (t *Ticker) Fired() uint64 { return t.fired.Load() }

// Passes returns the passes completed (tests await them).
func (t *Ticker) Passes() uint64 { return t.passes.Load() }

// Failed returns the firings whose publish failed (each retried).
func (t *Ticker) Failed() uint64 { return t.failed.Load() }

func (t *Ticker) run(ctx context.Context) {
	tk := time.NewTicker(t.cfg.Tick)
	defer tk.Stop()
	for {
		t.pass(ctx)
		t.passes.Add(1)
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
	}
}

// pass publishes every occurrence due now that this node did not publish
// within recentFor.
func (t *Ticker) pass(ctx context.Context) {
	now := t.cfg.Now()
	for id, at := range t.recent {
		if now.Sub(at) > recentFor {
			delete(t.recent, id)
		}
	}
	for _, f := range t.cfg.Schedules.Due(now) {
		id := f.MsgID(f.Tenant)
		if _, ok := t.recent[id]; ok || ctx.Err() != nil {
			continue
		}
		fctx, cancel := context.WithTimeout(ctx, fireTimeout)
		err := t.cfg.Schedules.Fire(fctx, f)
		cancel()
		if err != nil {
			t.failed.Add(1)
			if ctx.Err() == nil {
				t.cfg.Logger.Warn("scheduler: a schedule's board was not created yet; retrying", "tenant", f.Tenant,
					"schedule", f.Schedule, "start", time.UnixMilli(f.Start).UTC(), "err", err)
			}
			continue
		}
		t.recent[id] = now
		t.fired.Add(1)
		t.cfg.Logger.Info("scheduler: fired a schedule's occurrence", "tenant", f.Tenant, "schedule", f.Schedule,
			"start", time.UnixMilli(f.Start).UTC())
	}
}
