// Package gwtest runs a real gateway in-process for tests of the packages
// that talk to one from outside (the SDK, the widget): a hub on an embedded
// NATS server in a temporary directory and the API on a loopback listener.
// Stop and Start again is a restart on the same address and data.
package gwtest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rankwire/rankwire/api"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/live"
)

// Options are a test gateway's settings.
type Options struct {
	Keys         *auth.Keyring // required
	Static       http.Handler  // api.Config.Static: the widget, pages; nil: none
	Origins      []string      // live.Options.AllowedOrigins
	PushInterval time.Duration // 0: 20 ms
	// NATSURL is a NATS server with JetStream that several gateways share
	// (hub.Config.NATSURL): a cluster in one process. Empty: an embedded one each.
	NATSURL string
	// Live is the live plane's options; Origins sets its AllowedOrigins.
	Live live.Options
	// ReplicaID is hub.Config.ReplicaID: it names the replicas' consumers
	// (rw_<ReplicaID>_<tenant>_<n>), for a test that holds one. Empty: random.
	ReplicaID string
	// CatchupWait is api.Config.CatchupWait. Zero: its default.
	CatchupWait time.Duration
}

// Gateway is one in-process gateway. Its fields change with every Start.
type Gateway struct {
	t    testing.TB
	o    Options
	Addr string // host:port, kept across restarts
	Dir  string
	Hub  *hub.Hub
	API  *api.Server
	Reg  *prometheus.Registry // the API's metrics
	srv  *http.Server
	done chan error
}

// Start starts a gateway on a free loopback port and stops it when the
// test ends.
func Start(t testing.TB, o Options) *Gateway {
	t.Helper()
	if o.PushInterval == 0 {
		o.PushInterval = 20 * time.Millisecond
	}
	g := &Gateway{t: t, o: o, Addr: "127.0.0.1:0", Dir: t.TempDir()}
	g.Start()
	t.Cleanup(g.Stop)
	return g
}

// URL returns the gateway's base URL.
func (g *Gateway) URL() string { return "http://" + g.Addr }

// Start starts the gateway (again) on its address and data.
func (g *Gateway) Start() {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := hub.Start(ctx, hub.Config{DataDir: g.Dir, PushInterval: g.o.PushInterval, NATSURL: g.o.NATSURL, ReplicaID: g.o.ReplicaID})
	if err != nil {
		g.t.Fatal(err)
	}
	g.Hub, g.Reg = h, prometheus.NewRegistry()
	g.API = api.New(api.Config{Registry: g.Reg, Hub: h, Verifier: auth.NewVerifier(g.o.Keys, auth.Options{}), Keys: g.o.Keys,
		Static: g.o.Static, Live: g.liveOptions(), CatchupWait: g.o.CatchupWait})
	h.SetFeed(g.API.Feed()) // the API's live views push what the hub applies
	// After a restart the old port may take a moment to be free again: a
	// kernel's state, with no event to wait on.
	var ln net.Listener
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if ln, err = net.Listen("tcp", g.Addr); err == nil {
			break
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("listen on %s: %v", g.Addr, err)
		}
	}
	g.Addr = ln.Addr().String()
	g.srv = &http.Server{Handler: g.API}
	g.done = make(chan error, 1)
	go func() { g.done <- g.srv.Serve(ln) }()
}

// Stop shuts the gateway down as SIGTERM does: WebSockets get 1001.
// Safe to call when stopped.
func (g *Gateway) Stop() {
	if g.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = g.API.CloseWebSockets(ctx)
	_ = g.srv.Shutdown(ctx)
	if err := <-g.done; !errors.Is(err, http.ErrServerClosed) {
		g.t.Errorf("serve: %v", err)
	}
	g.Hub.Close()
	g.srv = nil
}

// liveOptions are the live plane's options: Options.Live with Origins.
func (g *Gateway) liveOptions() live.Options {
	o := g.o.Live
	o.AllowedOrigins = g.o.Origins
	return o
}
