package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rankwire/rankwire/api"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/connguard"
	"github.com/rankwire/rankwire/internal/live"
	"github.com/rankwire/rankwire/internal/readiness"
	"github.com/rankwire/rankwire/internal/scheduler"
	"github.com/rankwire/rankwire/web"
	"github.com/rankwire/rankwire/webhook"
)

// shutdownTimeout bounds a graceful shutdown: in-flight requests finish
// within it, then the hub writes snapshots.
const shutdownTimeout = 20 * time.Second

// run starts the gateway and serves until ctx ends, then shuts down in
// order. The API's listener opens before the hub starts: it answers
// /healthz 200 and /readyz 503 (early.go) while the hub opens NATS, waits
// for the cluster and loads tenants, then hands over to the API. The
// listeners of --pprof and --metrics-addr open before the hub too, so a
// busy address fails the start before anything else runs. At ctx's end: stop accepting and finish in-flight requests, close the
// WebSockets, then undo every start step in reverse (webhooks, demo,
// metrics, hub, which writes snapshots, pprof, reloads), return nil. It
// holds the data directory's lock throughout. It reports the address it
// listens on to ready, where ready is not nil, once /readyz answers 200.
func run(ctx context.Context, cfg Config, log *slog.Logger, out io.Writer, ready chan<- string) error {
	// Every listener's connections count against one budget of file
	// descriptors: see internal/connguard.
	g := &gateway{cfg: cfg, log: log, guard: connguard.New(connguard.Options{Logger: log}), metricsAddr: "none"}
	defer g.stop()
	for _, step := range []func(context.Context) error{
		g.lockData, g.loadKeys, g.startPprof, g.startMetrics, g.listenAPI, g.startHub, g.startDemo, g.startAPI, g.startScheduler, g.startWebhooks,
	} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return g.serve(ctx, out, ready)
}

// gateway is what run wires: each start step sets its part and registers
// the stop that undoes it. Owned by run's goroutine.
type gateway struct {
	cfg         Config
	log         *slog.Logger
	guard       *connguard.Guard
	reload      *reloader
	keys        *auth.Keyring
	demo        *demoKey // nil: not the demo
	hub         *hub.Hub
	system      *clusterSystem // nil outside an embedded cluster
	div         *divergence    // nil without --cluster; div.fps.Rebuilding() feeds readiness (tenants out of service here)
	reg         *prometheus.Registry
	metricsAddr string // "none" without --metrics-addr
	api         *api.Server
	srv         *http.Server // the API's, on ln, serving from listenAPI on
	ln          net.Listener
	handler     *handoff      // the early handler, the API once serve runs
	drain       *drainHandler // srv's: handler, with Connection: close once stopping
	errc        chan error    // srv.Serve's end
	tls         *tls.Config   // nil: plain HTTP; else ln serves TLS
	serving     atomic.Bool   // /readyz answers 200 while set (and ready says so)
	ready       *readiness.Machine
	embedded    *server.Server // the embedded NATS server; nil with --nats
	streams     *streamView    // embedded's streams, read once a beat; nil outside an embedded cluster
	stops       []func()
}

// onStop registers f to run at stop, before what was registered earlier.
func (g *gateway) onStop(f func()) { g.stops = append(g.stops, f) }

// stop runs the registered stops, last registered first, each within
// stopStepBound (stopbound.go): a step that hangs is logged and given up,
// and the process exits all the same.
func (g *gateway) stop() {
	for i := len(g.stops) - 1; i >= 0; i-- {
		runBounded(g.log, g.stops[i], stopStepBound)
	}
}

// lockData takes the data directory's lock, released last, after the hub
// has written its snapshots; and catches SIGHUP from here on, to reload
// the key file (reload.go) once the API serves.
func (g *gateway) lockData(context.Context) error {
	unlock, err := lockData(g.cfg.DataDir)
	if err != nil {
		return err
	}
	g.onStop(unlock)
	g.reload = newReloader(g.cfg.KeysFile, g.log)
	g.onStop(g.reload.stop)
	return nil
}

// loadKeys reads the key file, or generates the demo tenant without one.
// It sets the WebSocket cap of tenants whose entry sets none (listen.go).
func (g *gateway) loadKeys(context.Context) (err error) {
	g.keys, g.demo, err = loadKeys(g.cfg)
	if err == nil {
		g.cfg.MaxConns = connectionCaps(g.cfg.MaxConns, g.guard.Budget(), g.keys, g.log)
	}
	return err
}

// startPprof serves --pprof's listener, where set.
func (g *gateway) startPprof(context.Context) error {
	if g.cfg.PprofAddr == "" {
		return nil
	}
	stop, err := servePprof(g.cfg.PprofAddr, g.guard, g.log)
	if err != nil {
		return err
	}
	g.onStop(stop)
	return nil
}

// startHub starts the hub (NATS, streams, replicas), the API's listener
// answering /readyz 503 meanwhile.
func (g *gateway) startHub(ctx context.Context) error {
	cfg := g.cfg
	secret, err := readSecret(cfg.ClusterSecretFile)
	if err != nil {
		return err
	}
	cluster, natsAuth := cfg.hubCluster(secret)
	if err := newSystemPassword(&cluster); err != nil {
		return err
	}
	replicaID := newReplicaID()
	div := newDivergence(cfg, g.log)
	var fps *hub.Fingerprints
	if div != nil {
		fps = div.fps
	}
	stopWatch := watchRoutes(cfg, g.handler.setReason, g.log) // early.go: who answered, while the majority is awaited
	var srv *server.Server                                    // the embedded one, for the cluster's metrics
	h, err := hub.Start(ctx, hub.Config{DataDir: cfg.DataDir, NATSURL: cfg.NATSURL, Logger: g.log, PushInterval: cfg.PushInterval,
		MaxStore: cfg.MaxStore, WriteTimeout: cfg.WriteTimeout, IdempotencyRetention: cfg.IdempotencyRetention,
		Cluster: cluster, NATSAuth: natsAuth, JSDomain: cfg.NATSDomain, Replicas: cfg.Replicas, Sync: cfg.Sync, Fingerprints: fps,
		Embedded: func(s *server.Server) { srv = s }, ReplicaID: replicaID})
	stopWatch()
	if err != nil {
		return err // hub's errors name the hub
	}
	if srv != nil && cfg.Cluster != "" {
		g.streams = newStreamView(srv)                     // streamview.go: one reading a beat for the metrics, the beats, the prober
		g.reg.MustRegister(newClusterCollector(g.streams)) // cluster_metrics.go
	}
	g.hub, g.embedded = h, srv
	g.onStop(func() { closeHub(h, g.log) })
	if srv != nil && cfg.Cluster != "" {
		if g.system, err = openClusterSystem(srv, cluster, replicaID); err != nil {
			return err
		}
		// Names this node's replicas' consumers, wherever JetStream placed
		// them: an operator (and a test) tells whose reader a consumer is.
		g.log.Info("replicas read through consumers", "prefix", g.system.own)
		g.onStop(g.system.close) // before the hub closes the server
		// Without the socket (a --data path too long for one) the node
		// serves all the same: only `gateway cluster` cannot reach it.
		if stopAdmin, err := serveClusterAdmin(cfg.DataDir, cfg.Node, g.system, g.log); err != nil {
			g.log.Warn("gateway cluster cannot reach this node", "err", err)
		} else {
			g.onStop(stopAdmin)
		}
	}
	if g.cfg.cursorKey, err = cursorKey(cfg.DataDir, secret); err != nil {
		return err
	}
	if div != nil {
		stop, err := div.start(h.JetStream().Conn())
		if err != nil {
			return fmt.Errorf("fingerprints: %w", err)
		}
		g.onStop(stop) // before the hub closes
		div.register(g.reg)
		g.div = div
	}
	g.handler.setReason("building the API")
	return nil
}

// startMetrics makes the metrics registry and serves --metrics-addr's
// listener, where set.
func (g *gateway) startMetrics(context.Context) error {
	g.reg = newRegistry(g.guard)
	if g.cfg.MetricsAddr == "" {
		return nil
	}
	addr, stop, err := serveMetrics(g.cfg, g.reg, g.guard, g.log)
	if err != nil {
		return err
	}
	g.onStop(stop)
	g.metricsAddr = addr
	return nil
}

// startDemo seeds and runs the demo tenant's simulation, in demo mode.
// Stopped before the hub closes: it submits to the hub.
func (g *gateway) startDemo(ctx context.Context) error {
	if g.demo == nil {
		return nil
	}
	stop, err := g.demo.startDemo(ctx, g.hub, g.cfg.Demo || g.cfg.KeysFile == "", g.cfg.DemoRound, g.log)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	g.onStop(stop)
	return nil
}

// listenAPI listens on --addr (TLS over the guarded listener: listen.go)
// and serves the early handler there until serve hands it to the API.
func (g *gateway) listenAPI(context.Context) error {
	tlsCfg, err := serverTLS(g.cfg)
	if err != nil {
		return err
	}
	ln, err := listenAPI(g.cfg.Addr, tlsCfg, g.guard)
	if err != nil {
		return err
	}
	g.ln, g.tls = ln, tlsCfg
	g.handler = newHandoff(hubWait(g.cfg))
	g.drain = &drainHandler{next: g.handler}
	g.srv = newHTTPServer(g.cfg, g.drain, g.log)
	guardServer(g.srv, g.guard) // listen.go
	g.errc = make(chan error, 1)
	go func() { g.errc <- g.srv.Serve(ln) }()
	g.log.Info("starting: /healthz answers, /readyz says what the start waits for", "addr", ln.Addr().String(), "waiting_for", hubWait(g.cfg))
	// Where a later start step fails; after shutdownAt's Shutdown, a no-op.
	g.onStop(func() { g.srv.Close() })
	return nil
}

// startAPI builds the API, its live views wired to the hub's change feed,
// and runs the verifier's JWKS refresher; the listener hands over to it in
// serve.
func (g *gateway) startAPI(ctx context.Context) error {
	verifier := auth.NewVerifier(g.keys, auth.Options{JWKS: auth.JWKSOptions{Logger: g.log}})
	g.onStop(watchJWKS(ctx, verifier, g.reg))
	g.ready = readiness.New(readiness.Config{MaxLag: g.cfg.MaxLag, FailAfter: g.cfg.ReadyHold})
	p := &prober{h: g.hub, m: g.ready, log: g.log, gate: newStartGate(g.cfg, g.embedded, g.log)}
	if g.div != nil {
		p.rebuilding = g.div.fps.Rebuilding
	}
	if w := newPeerWatch(g.cfg, g.streams, g.system, g.ready, g.log); w != nil { // peers.go; before the prober's first look
		stop, err := w.start(g.hub.JetStream().Conn())
		if err != nil {
			return fmt.Errorf("cluster beats: %w", err)
		}
		g.onStop(stop) // before the hub closes
		w.register(g.reg)
		p.peers = w
	}
	g.onStop(p.start()) // stopped before the hub closes
	registerReadiness(g.reg, g)
	g.api = newAPI(g.cfg, g.hub, verifier, g.reg, g.log, g, g.demo)
	g.hub.SetFeed(g.api.Feed()) // the one consumer of the hub's change feed: the API's live views
	a := g.api
	g.hub.Quotas().SetNotifyQuota(func(tenant string) int64 { // the keyring in use: a reload takes effect
		lim, _ := a.Keyring().Limits(tenant)
		return lim.NotificationBytes // zero: the hub's default
	})
	g.reload.serve(g.api)
	return nil
}

// startScheduler runs the ticker that creates the tenants' scheduled
// tournament boards (internal/scheduler), after the API has set the quotas
// its events carry; stopped before the hub closes.
func (g *gateway) startScheduler(context.Context) error {
	t := scheduler.Start(scheduler.Config{Schedules: hub.SchedulesOf(g.hub), Logger: g.log})
	g.onStop(t.Close)
	g.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_schedule_firings_total",
			Help: "Occurrences of schedules this node published for their board (each stored once whichever nodes publish it)."},
			func() float64 { return float64(t.Fired()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rankwire_schedule_firing_failures_total",
			Help: "Publishes of a schedule's occurrence that failed; each is retried while the occurrence is due."},
			func() float64 { return float64(t.Failed()) }),
	)
	return nil
}

// startWebhooks delivers the tenants' notifications; stopped before the
// hub closes: it reads the notifications' stream.
func (g *gateway) startWebhooks(context.Context) error {
	self := []string{g.ln.Addr().String(), g.metricsAddr} // never a webhook's destination
	hooks := startWebhooks(g.hub, g.api, g.reg, g.log, webhook.Config{Allow: g.cfg.WebhookAllow, Self: self})
	g.onStop(func() { hooks.Close() })
	return nil
}

// serve hands the listener to the API until ctx ends, announcing the
// address (the log line, the demo's banner, ready), then shuts it down.
func (g *gateway) serve(ctx context.Context, out io.Writer, ready chan<- string) error {
	g.handler.handTo(g.api)
	g.serving.Store(true)
	addr := g.ln.Addr().String()
	// addr and metrics_addr lead the line, in that order: scripts and tests read them.
	g.log.Info("ready", "addr", addr, "metrics_addr", g.metricsAddr, "tls", g.tls != nil, "data", g.cfg.DataDir,
		"nats", natsMode(g.cfg), "connection_budget", g.guard.Budget(), "max_connections", g.cfg.MaxConns, "version", versionString())
	if g.demo != nil {
		printDemo(out, addr, g.demo)
	}
	if ready != nil {
		ready <- addr
	}
	return g.shutdownAt(ctx, g.errc)
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

// newAPI builds the API; demo, where not nil, adds the demo page and its
// endpoints to the widget that is always served.
func newAPI(cfg Config, h *hub.Hub, verifier *auth.Verifier, reg *prometheus.Registry, log *slog.Logger, g *gateway, demo *demoKey) *api.Server {
	static := web.Handler(web.Options{})
	if demo != nil {
		demo.reg = reg
		static = web.Handler(web.Options{Demo: demo})
	}
	return api.New(api.Config{
		Hub: h, Verifier: verifier, Keys: verifier.Keyring(),
		Readiness: g.readiness, Logger: log, Registry: reg, Static: static,
		ReadTimeout: cfg.ReadTimeout, CursorKey: cfg.cursorKey, Live: live.Options{AllowedOrigins: cfg.Origins, SlowTimeout: cfg.SlowTimeout,
			PingInterval: cfg.PingInterval, HeartbeatInterval: heartbeat(cfg.Heartbeat), MaxConnections: cfg.MaxConns,
			Status: g.tenantStatus},
	})
}

// heartbeat maps --heartbeat-interval to live.Options': 0 turns heartbeats
// off, which the plane takes as a negative interval.
func heartbeat(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// newHTTPServer returns the API's HTTP server, serving h.
func newHTTPServer(cfg Config, h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Addr: cfg.Addr, Handler: h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       cfg.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// shutdownAt waits for ctx or a serving failure, then shuts the API's
// server down: /readyz turns 503 and answers say Connection: close, the
// node hands its stream leaderships over (cluster_handoff.go), in-flight
// requests finish, and the WebSockets, which Shutdown does not close, are
// closed with 1001.
func (g *gateway) shutdownAt(ctx context.Context, errc <-chan error) error {
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	g.log.Info("shutting down")
	g.serving.Store(false)
	g.drain.draining.Store(true)
	drained := g.handOver()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := g.srv.Shutdown(sctx)
	drained()
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := g.api.CloseWebSockets(sctx); err != nil {
		g.log.Warn("closing WebSockets", "err", err)
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
	dest.JS, dest.API, dest.Logger, dest.Keys = h.JetStream(), h.JetStreamAPI, log, h.Privacy().Keys()
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
		backlogCollector{d},
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
