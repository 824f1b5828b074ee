package live

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/catchup"
	"github.com/rankwire/rankwire/internal/refusal"
	"github.com/rankwire/rankwire/subscriptions"
	"github.com/rankwire/rankwire/wire"
)

// DefaultMaxConnections is a tenant's WebSocket connection cap when neither
// its key file entry nor Options.MaxConnections sets one.
const DefaultMaxConnections = 20_000

// Options tune the plane. The zero value is a working plane; the push
// interval is hub.Config.PushInterval: the most the hub's feed coalesces changes under load (idle, it pushes at once).
type Options struct {
	// AllowedOrigins are the host patterns (path.Match, case-insensitive;
	// with "://" matched against scheme://host) of browser pages that may
	// open a WebSocket from another origin. Nil means none: only pages
	// served from the gateway's own host, and clients that send no Origin
	// (non-browser). Never "*" by default.
	AllowedOrigins []string
	// MaxConnections is a tenant's connection cap when its key file entry
	// sets none. Zero means DefaultMaxConnections.
	MaxConnections int
	// AuthTimeout bounds the wait for the first auth message of a
	// connection without access_token. Zero means wire.AuthTimeout (5 s).
	AuthTimeout time.Duration
	// SlowTimeout is how long bytes a client's socket could not take may
	// wait unsent before the client, which stopped reading, is closed
	// (4008). Zero means wire.SlowTimeout (10 s).
	SlowTimeout time.Duration
	// PingInterval is how often an idle connection is pinged. Zero means
	// wire.PingInterval (30 s).
	PingInterval time.Duration
	// HeartbeatInterval is how often every authenticated connection gets
	// a heartbeat (PROTOCOL.md, "Heartbeats"). Zero means
	// wire.HeartbeatInterval (2 s); negative, none.
	HeartbeatInterval time.Duration
	// Status says, for a heartbeat, how this node stands for tenant beyond
	// what the hub knows: writable false while the node is not ready (no
	// reachable stream leader, no JetStream API), stale true while its
	// replica trails by more than the lag bound (internal/readiness). Nil
	// means writable and fresh. Called once per tenant per heartbeat
	// round; must not block.
	Status func(tenant string) (writable, stale bool)
	// ResumeWait bounds how long a subscription that resumes with since
	// past what this gateway has applied of its board-window waits for the
	// gateway to apply it before it is answered unavailable, so that the
	// client resumes through another gateway (resume.go). Zero means
	// DefaultResumeWait (2 s).
	ResumeWait time.Duration
}

// Config wires a Plane. Hub and Verifier are required.
type Config struct {
	Hub      *hub.Hub
	Verifier *auth.Verifier
	// Keyring returns the keyring of per-tenant limits (connection caps) and
	// of refusal logs. Nil means the Verifier's.
	Keyring func() *auth.Keyring
	// ErrorOf maps an error the hub returned to a join to the protocol's
	// code and message, logging what only the operator may see; api passes
	// its own, so that HTTP and WebSocket answer alike. Nil means a
	// *hub.Error by its code and message, anything else internal.
	ErrorOf func(error) (code, message string)
	// Logger receives refusals and errors. Nil means discard.
	Logger *slog.Logger
	// Registry receives the rankwire_ws_* metrics. Nil means a new one.
	Registry *prometheus.Registry
	// Catchup holds a subscription to a board this node does not know
	// until its replica has applied what the tenant's stream held
	// (internal/catchup); api passes its own, so that HTTP reads and
	// subscriptions share one. Nil means one of the plane's own.
	Catchup *catchup.Gate
	Options
}

// Plane is the WebSocket delivery plane: the /v1/ws handler, its
// connections and their per-tenant counts, the subscriptions engine, and
// the writer pool. It consumes the hub's change feed only where its owner
// wires it (hub.SetFeed(p.Feed())). Safe for concurrent use.
type Plane struct {
	hub      *hub.Hub
	fresh    *catchup.Gate // subscriptions to a board unknown here: catchup.go
	verifier *auth.Verifier
	keyring  func() *auth.Keyring
	errorFn  func(error) (string, string)
	log      *slog.Logger
	eng      *subscriptions.Engine
	pool     *writerPool
	metrics  *metrics
	feed     *feed
	origins  []string
	authTO   time.Duration
	slowTO   time.Duration
	resumeTO time.Duration // Options.ResumeWait
	pingTO   time.Duration
	maxConn  int
	// pings visits every WebSocket once per pingTO (keepalive.go); closers
	// counts its closes of connections that answered no ping, which Close
	// waits for. epoch is the zero of clock.
	pings   *wheel
	closers sync.WaitGroup
	epoch   time.Time
	// beatEvery is the heartbeat interval (≤ 0: none); beats visits every
	// connection once per it (heartbeat.go; nil: none).
	beatEvery time.Duration
	beats     *wheel
	status    func(tenant string) (writable, stale bool) // Options.Status; nil: writable, fresh
	// msgRate and msgBurst bound a connection's client messages: see
	// wire.MessageRate. Fields, so that tests may lower them.
	msgRate, msgBurst int
	refusals          *refusal.Log
	// followEvery is how often following subscriptions look for a
	// turnover (follow.go; ≤ 0: only the change feed moves them);
	// followStop and followDone, guarded by mu, stop its goroutine.
	followEvery            time.Duration
	followStop, followDone chan struct{}

	followMu sync.Mutex // guards follows; a leaf
	follows  map[followKey]map[*liveView]struct{}
	// movedTo is, per followed key, the window every follower of it was
	// last moved to (or joined), so that a feed batch of that window, the
	// usual one, copies and locks nothing; guarded by followMu.
	movedTo map[followKey]string

	wg sync.WaitGroup // one per connection's goroutine

	mu      sync.Mutex // guards the fields below; taken under a wsConn's mu, before the pool's
	conns   map[liveConn]struct{}
	tenants map[string]int
	closing bool
}

// New returns a Plane for cfg. It panics where cfg lacks Hub or Verifier:
// that is a wiring mistake, not input.
func New(cfg Config) *Plane {
	if cfg.Hub == nil || cfg.Verifier == nil {
		panic("live: Config needs Hub and Verifier")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.Keyring == nil {
		cfg.Keyring = cfg.Verifier.Keyring
	}
	if cfg.ErrorOf == nil {
		cfg.ErrorOf = hubErrorOf(cfg.Logger)
	}
	if cfg.Catchup == nil {
		cfg.Catchup = catchup.New(cfg.Hub, 0)
	}
	o := cfg.Options
	p := &Plane{
		hub: cfg.Hub, fresh: cfg.Catchup, verifier: cfg.Verifier, keyring: cfg.Keyring, errorFn: cfg.ErrorOf, log: cfg.Logger,
		eng: subscriptions.NewEngine(subscriptions.Config{}), origins: o.AllowedOrigins,
		authTO: orDefault(o.AuthTimeout, wire.AuthTimeout), slowTO: orDefault(o.SlowTimeout, wire.SlowTimeout),
		resumeTO: orDefault(o.ResumeWait, DefaultResumeWait),
		pingTO:   orDefault(o.PingInterval, wire.PingInterval), maxConn: o.MaxConnections, beatEvery: o.HeartbeatInterval, status: o.Status,
		msgRate: wire.MessageRate, msgBurst: wire.MessageBurst, refusals: refusal.New(cfg.Logger, "websocket refused"),
		conns: map[liveConn]struct{}{}, tenants: map[string]int{},
		followEvery: defaultFollowEvery, follows: map[followKey]map[*liveView]struct{}{}, movedTo: map[followKey]string{},
	}
	if p.maxConn <= 0 {
		p.maxConn = DefaultMaxConnections
	}
	if p.beatEvery == 0 {
		p.beatEvery = wire.HeartbeatInterval
	}
	warnOpenOrigins(cfg.Logger, o.AllowedOrigins)
	p.metrics = newMetrics(cfg.Registry, p.eng)
	p.pool = newWriterPool(p.metrics)
	p.feed = &feed{p: p}
	p.epoch = time.Now()
	p.pings = p.newPingWheel()
	p.beats = p.newBeatWheel()
	return p
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// connCap returns tenant's connection cap.
func (p *Plane) connCap(tenant string) int {
	if keys := p.keyring(); keys != nil {
		if lim, ok := keys.Limits(tenant); ok && lim.Connections > 0 {
			return lim.Connections
		}
	}
	return p.maxConn
}

// admit counts a connection of tenant, or reports false at the cap or
// while closing. O(1).
func (p *Plane) admit(tenant string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing || p.tenants[tenant] >= p.connCap(tenant) {
		return false
	}
	p.tenants[tenant]++
	return true
}

func (p *Plane) release(tenant string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.releaseLocked(tenant)
}

func (p *Plane) releaseLocked(tenant string) {
	if p.tenants[tenant]--; p.tenants[tenant] <= 0 {
		delete(p.tenants, tenant)
	}
}

// liveConn is an open connection of the plane, whatever its transport: a
// WebSocket (wsConn) or an event stream (sseConn). Plane.Close, CloseRevoked
// and Usage reach every connection through it.
type liveConn interface {
	// current returns the connection's scope, and whether it is
	// authenticated: whether it holds a slot of its tenant's connection
	// cap, which untrack gives back.
	current() (auth.Scope, bool)
	// close ends the connection with e, once; it may wait for the peer.
	close(e closeError)
	// abort ends the connection at once, without a close handshake.
	abort()
	// boards returns the board of each of its subscriptions.
	boards() []string
	// ending reports whether it is closing.
	ending() bool
	// outbox is the outbox the writer pool writes.
	outbox() *subscriptions.Outbox
}

// track registers c for Close, or reports false while closing.
func (p *Plane) track(c liveConn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing {
		return false
	}
	p.conns[c] = struct{}{}
	p.wg.Add(1)
	p.pool.start()
	p.pings.start()
	p.startBeats(c)
	p.startFollow()
	return true
}

// untrack forgets c, which has ended (its subscriptions gone), and gives
// back its tenant's slot where it holds one (current reports it
// authenticated): both under one acquisition of p.mu, which every closing
// connection takes, so that a crowd closing at once queues on it half as
// long.
func (p *Plane) untrack(c liveConn) {
	sc, held := c.current()
	p.leaveBeats(c)
	p.mu.Lock()
	delete(p.conns, c)
	if held {
		p.releaseLocked(sc.Tenant)
	}
	p.mu.Unlock()
	p.wg.Done()
}

// connections returns the open connections, copied under p.mu.
func (p *Plane) connections() []liveConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	conns := make([]liveConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	return conns
}

// Close stops the heartbeats, closes every WebSocket with 1001 (going away), ends every event
// stream with a close event of that code, and refuses new ones,
// waiting until their goroutines returned or ctx ends, when it drops the
// rest without a close handshake; then it stops the writers.
// http.Server.Shutdown does not close hijacked connections: the gateway
// calls this next to it. Safe to call more than once.
func (p *Plane) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	p.stopBeats()
	p.stopFollow()
	p.pings.stopWait()
	conns := p.connections()
	for _, c := range conns {
		go c.close(newClose(wire.CloseGoingAway, "server shutting down"))
	}
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	defer p.closers.Wait() // bounded by coder/websocket's close handshake
	select {
	case <-done:
		p.pool.close()
		return nil
	case <-ctx.Done():
		for _, c := range conns { // ends their goroutines
			c.abort()
		}
		<-done
		p.pool.close()
		return ctx.Err()
	}
}
