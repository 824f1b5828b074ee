package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rankwire/rankwire/internal/connguard"
)

// servePprof serves Go's profiles on addr, on its own listener so that the
// API's port never exposes them, until the returned stop is called.
// Operators point it at loopback: `--pprof 127.0.0.1:6060`, then `go tool
// pprof http://127.0.0.1:6060/debug/pprof/profile?seconds=20`.
func servePprof(addr string, guard *connguard.Guard, log *slog.Logger) (stop func(), err error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	// No idle timeout beyond the default: profiles stream for their seconds.
	_, stop, err = serveSide("--pprof", addr, mux, 0, guard, log)
	return stop, err
}

// serveMetrics serves reg's /metrics on cfg.MetricsAddr, never on the API's
// listener (their labels name tenants and boards), until the returned stop
// is called. It returns the address it listens on: with port 0, the port
// the system chose.
func serveMetrics(cfg Config, reg *prometheus.Registry, guard *connguard.Guard, log *slog.Logger) (addr string, stop func(), err error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return serveSide("--metrics-addr", cfg.MetricsAddr, mux, cfg.IdleTimeout, guard, log)
}

// serveSide serves h on a listener of its own at addr, whose connections
// count against guard's budget. flag names the listener in errors and logs.
func serveSide(flag, addr string, h http.Handler, idle time.Duration, guard *connguard.Guard, log *slog.Logger) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, listenError(flag, addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idle, ConnState: guard.ConnState,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(guard.Listener(ln)); !errors.Is(err, http.ErrServerClosed) {
			log.Error("serving "+flag, "addr", ln.Addr().String(), "err", err)
		}
	}()
	log.Info("listening", "flag", flag, "addr", ln.Addr().String())
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
		<-done
	}
	return ln.Addr().String(), stop, nil
}
