package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rankwire/rankwire/api"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/connguard"
	"github.com/rankwire/rankwire/internal/live"
	"github.com/rankwire/rankwire/web"
	"github.com/rankwire/rankwire/webhook"
)

// shutdownTimeout bounds a graceful shutdown: in-flight requests finish
// within it, then the hub writes snapshots.
const shutdownTimeout = 20 * time.Second

// run starts the gateway and serves until ctx ends, then shuts down in
// order: stop accepting and finish in-flight requests, close the hub (which
// writes snapshots), return nil. It holds the data directory's lock
// throughout. It reports the address it listens on to ready, where ready is
// not nil, once /readyz answers 200.
func run(ctx context.Context, cfg Config, log *slog.Logger, out io.Writer, ready chan<- string) error {
	unlock, err := lockData(cfg.DataDir)
	if err != nil {
		return err
	}
	defer unlock() // last: after the hub has written its snapshots
	// SIGHUP reloads the key file (reload.go); caught from here on.
	reload := newReloader(cfg.KeysFile, log)
	defer reload.stop()
	keys, demo, err := loadKeys(cfg)
	if err != nil {
		return err
	}
	// Every listener's connections count against one budget of file
	// descriptors: see internal/connguard.
	guard := connguard.New(connguard.Options{Logger: log})
	cfg.MaxConns = connectionCaps(cfg.MaxConns, guard.Budget(), keys, log) // listen.go
	if cfg.PprofAddr != "" {
		stopPprof, err := servePprof(cfg.PprofAddr, guard, log)
		if err != nil {
			return err
		}
		defer stopPprof()
	}
	secret, err := readSecret(cfg.ClusterSecretFile)
	if err != nil {
		return err
	}
	cluster, natsAuth := cfg.hubCluster(secret)
	h, err := hub.Start(ctx, hub.Config{DataDir: cfg.DataDir, NATSURL: cfg.NATSURL, Logger: log, PushInterval: cfg.PushInterval,
		MaxStore: cfg.MaxStore, WriteTimeout: cfg.WriteTimeout, IdempotencyRetention: cfg.IdempotencyRetention,
		Cluster: cluster, NATSAuth: natsAuth, JSDomain: cfg.NATSDomain, Replicas: cfg.Replicas, Sync: cfg.Sync})
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	defer closeHub(h, log)
	reg := newRegistry(guard)
	metricsAddr := "none"
	if cfg.MetricsAddr != "" {
		addr, stopMetrics, err := serveMetrics(cfg, reg, guard, log)
		if err != nil {
			return err
		}
		defer stopMetrics()
		metricsAddr = addr
	}
	if demo != nil {
		stopDemo, err := demo.startDemo(ctx, h, cfg.Demo || cfg.KeysFile == "", cfg.DemoRound, log)
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		defer stopDemo() // before closeHub: the simulation submits to the hub
	}
	tlsCfg, err := serverTLS(cfg)
	if err != nil {
		return err
	}
	ln, err := listenAPI(cfg.Addr, tlsCfg, guard) // listen.go
	if err != nil {
		return err
	}
	var serving atomic.Bool
	verifier := auth.NewVerifier(keys, auth.Options{JWKS: auth.JWKSOptions{Logger: log}})
	stopJWKS := watchJWKS(ctx, verifier, reg)
	defer stopJWKS()
	srv := newHTTPServer(cfg, h, verifier, reg, log, func() bool { return serving.Load() && h.Connected() }, demo)
	guardServer(srv, guard) // listen.go
	a := srv.Handler.(*api.Server)
	reload.serve(a)
	hooks := startWebhooks(h, a, reg, log, webhook.Config{Allow: cfg.WebhookAllow, Self: []string{ln.Addr().String(), metricsAddr}})
	defer hooks.Close() // before closeHub: it reads the notifications' stream
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	serving.Store(true)
	addr := ln.Addr().String()
	// addr and metrics_addr lead the line, in that order: scripts and tests read them.
	log.Info("ready", "addr", addr, "metrics_addr", metricsAddr, "tls", tlsCfg != nil, "data", cfg.DataDir, "nats", natsMode(cfg),
		"connection_budget", guard.Budget(), "max_connections", cfg.MaxConns, "version", versionString())
	if demo != nil {
		printDemo(out, addr, demo)
	}
	if ready != nil {
		ready <- addr
	}
	return serveUntil(ctx, srv, &serving, errc, log)
}

// newRegistry returns the registry of the gateway's metrics: Go's, the
// process's and the connection budget's; the API adds its own.
func newRegistry(guard *connguard.Guard) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rankwire_http_connections_open",
			Help: "Connections open on the gateway's listeners (API, metrics, pprof), WebSockets included."},
			func() float64 { return float64(guard.Open()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "rankwire_http_connection_budget",
			Help: "Connections the gateway holds open at most: its file descriptor limit less a reserve."},
			func() float64 { return float64(guard.Budget()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_http_connections_evicted_total",
			Help: "Connections without a request in progress closed to make room for a new one, the budget being full."},
			func() float64 { return float64(guard.Evicted()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_http_connections_refused_total",
			Help: "New connections closed at once: the budget was full of connections with a request in progress."},
			func() float64 { return float64(guard.Refused()) }),
	)
	return reg
}

// newHTTPServer builds the API's HTTP server; demo, where not nil, adds
// the demo page and its endpoints to the widget that is always served.
func newHTTPServer(cfg Config, h *hub.Hub, verifier *auth.Verifier, reg *prometheus.Registry, log *slog.Logger, ready func() bool, demo *demoKey) *http.Server {
	static := web.Handler(web.Options{})
	if demo != nil {
		demo.reg = reg
		static = web.Handler(web.Options{Demo: demo})
	}
	handler := api.New(api.Config{
		Hub: h, Verifier: verifier, Keys: verifier.Keyring(),
		Ready: ready, Logger: log, Registry: reg, Static: static,
		ReadTimeout: cfg.ReadTimeout, Live: live.Options{AllowedOrigins: cfg.Origins, SlowTimeout: cfg.SlowTimeout,
			PingInterval: cfg.PingInterval, MaxConnections: cfg.MaxConns},
	})
	h.SetFeed(handler.Feed()) // the one consumer of the hub's change feed: the API's live views
	return &http.Server{
		Addr: cfg.Addr, Handler: handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       cfg.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// serveUntil waits for ctx or a serving failure, then shuts the server down.
func serveUntil(ctx context.Context, srv *http.Server, serving *atomic.Bool, errc <-chan error, log *slog.Logger) error {
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	serving.Store(false)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	// Shutdown does not close hijacked connections: say goodbye (1001) to
	// the WebSocket clients ourselves.
	if a, ok := srv.Handler.(*api.Server); ok {
		if err := a.CloseWebSockets(sctx); err != nil {
			log.Warn("closing WebSockets", "err", err)
		}
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

func closeHub(h *hub.Hub, log *slog.Logger) {
	if err := h.Close(); err != nil {
		log.Error("closing hub", "err", err)
	}
}

func natsMode(cfg Config) string {
	if cfg.NATSURL == "" {
		return "embedded"
	}
	return "external"
}

// loadKeys reads the key file, or generates the demo tenant without one.
func loadKeys(cfg Config) (*auth.Keyring, *demoKey, error) {
	if cfg.KeysFile != "" {
		keys, err := auth.LoadKeys(cfg.KeysFile)
		return keys, nil, err
	}
	keys, sk, err := auth.GenerateDemo(demoTenant)
	if err != nil {
		return nil, nil, err
	}
	return keys, &demoKey{key: sk}, nil
}

// startWebhooks delivers each tenant's notifications to the webhook its
// key file entry names (the keyring in use, so a reload takes effect), and
// registers the deliveries' counters. dest holds the destination policy
// (Allow, Self).
func startWebhooks(h *hub.Hub, a *api.Server, reg *prometheus.Registry, log *slog.Logger, dest webhook.Config) *webhook.Deliverer {
	dest.JS, dest.API, dest.Logger = h.JetStream(), h.JetStreamAPI, log
	dest.Hooks = func() map[string]webhook.Hook {
		out := map[string]webhook.Hook{}
		for tenant, w := range a.Keyring().Webhooks() {
			out[tenant] = webhook.Hook{URL: w.URL, Secret: w.Secret}
		}
		return out
	}
	d := webhook.Start(dest)
	for _, r := range webhook.Reasons {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_webhook_refused_total",
			Help: "Webhook attempts refused by the destination policy, never connected (see --webhook-allow).", ConstLabels: prometheus.Labels{"reason": r}},
			func() float64 { return float64(d.Stats().Refused[r]) }))
	}
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_webhook_delivered_total",
			Help: "Notifications a tenant's webhook took (answered 2xx)."},
			func() float64 { return float64(d.Stats().Delivered) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_webhook_failures_total",
			Help: "Webhook attempts that failed (no answer, or not 2xx); each is retried with backoff."},
			func() float64 { return float64(d.Stats().Failed) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_webhook_dropped_total",
			Help: "Notifications given up after 24 h of failed attempts."},
			func() float64 { return float64(d.Stats().Dropped) }),
	)
	return d
}

// serverTLS loads --tls-cert and --tls-key, or returns nil without them.
// HTTP/1.1 only: WebSockets upgrade an HTTP/1.1 connection (a browser that
// negotiated HTTP/2 would need RFC 8441, which the gateway does not speak).
func serverTLS(cfg Config) (*tls.Config, error) {
	if cfg.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}, nil
}
