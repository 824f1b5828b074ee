package main

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rankwire/rankwire/api"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/connguard"
)

// reloader reloads the key file on SIGHUP (PROTOCOL.md, "Keys reload").
// run creates it first thing, so that a SIGHUP during start-up is held
// (the channel holds one; more coalesce) instead of ending the process,
// and hands it the API once that exists. One goroutine; reloads run one
// at a time.
type reloader struct {
	keysFile string
	log      *slog.Logger
	hup      chan os.Signal
	api      chan *api.Server // holds the API from serve; closed by stop
	done     chan struct{}    // closed when the goroutine returns
}

func newReloader(keysFile string, log *slog.Logger) *reloader {
	r := &reloader{keysFile: keysFile, log: log, hup: make(chan os.Signal, 1),
		api: make(chan *api.Server, 1), done: make(chan struct{})}
	signal.Notify(r.hup, syscall.SIGHUP)
	go r.loop()
	return r
}

func (r *reloader) loop() {
	defer close(r.done)
	a, ok := <-r.api
	if !ok {
		return // stopped before serving
	}
	for range r.hup {
		reloadKeys(r.keysFile, a, r.log)
	}
}

// serve starts reloading into a, including a SIGHUP held since start-up.
// Call it at most once, before stop.
func (r *reloader) serve(a *api.Server) { r.api <- a }

// stop ends the reloads, waiting for one under way. SIGHUP is ignored from
// then on: the process is shutting down, and SIGHUP's default action would
// end it before the hub wrote its snapshots.
func (r *reloader) stop() {
	signal.Ignore(syscall.SIGHUP) // also ends r.hup's registration: nothing more is sent on it
	close(r.hup)
	close(r.api)
	<-r.done
}

// reloadKeys re-reads the key file and swaps it in whole, or, where the
// file does not read or parse, logs why at ERROR and keeps the keys in
// use: a file is never half applied. Without a key file (demo mode) it
// logs that there is nothing to reload. The log names tenants and kids,
// never key material.
func reloadKeys(keysFile string, a *api.Server, log *slog.Logger) {
	if keysFile == "" {
		log.Info("SIGHUP: no --keys file (demo mode), nothing to reload")
		return
	}
	start := time.Now()
	next, err := auth.LoadKeys(keysFile)
	if err == nil {
		var ch auth.KeyChanges
		ch, err = a.ReloadKeys(next)
		if err == nil {
			log.Info("keys reloaded", "file", keysFile, "tenants", len(next.Tenants()),
				"added_tenants", ch.AddedTenants, "removed_tenants", ch.RemovedTenants,
				"added_keys", ch.AddedKeys, "removed_keys", ch.RemovedKeys, "took", time.Since(start).Round(time.Microsecond))
			// The gateway's Guard has the default budget (run): the same
			// descriptor limit, read again.
			warnTenantCaps(next, connguard.DefaultBudget(), log)
			return
		}
	}
	log.Error("keys not reloaded: keeping the keys in use", "file", keysFile, "err", err)
}
