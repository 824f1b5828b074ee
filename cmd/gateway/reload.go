package main

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/rankwire/rankwire/api"
	"github.com/rankwire/rankwire/auth"
)

// watchReload reloads the key file on each SIGHUP until the returned stop
// is called (PROTOCOL.md, "Keys reload"). One goroutine; signals that
// arrive during a reload coalesce into one more (the channel holds one).
func watchReload(keysFile string, a *api.Server, log *slog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range hup {
			reloadKeys(keysFile, a, log)
		}
	}()
	return func() {
		signal.Stop(hup)
		close(hup)
		<-done
	}
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
	next, err := auth.LoadKeys(keysFile)
	if err == nil {
		var ch auth.KeyChanges
		ch, err = a.ReloadKeys(next)
		if err == nil {
			log.Info("keys reloaded", "file", keysFile, "tenants", len(next.Tenants()),
				"added_tenants", ch.AddedTenants, "removed_tenants", ch.RemovedTenants,
				"added_keys", ch.AddedKeys, "removed_keys", ch.RemovedKeys)
			return
		}
	}
	log.Error("keys not reloaded: keeping the keys in use", "file", keysFile, "err", err)
}
