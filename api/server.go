package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/catchup"
	"github.com/rankwire/rankwire/internal/connguard"
	"github.com/rankwire/rankwire/internal/live"
	"github.com/rankwire/rankwire/internal/refusal"
	"github.com/rankwire/rankwire/wire"
)

// DefaultMaxBody is the largest request body accepted when Config.MaxBody is zero.
const DefaultMaxBody = 1 << 20

// DefaultReadTimeout is Config.ReadTimeout when zero.
const DefaultReadTimeout = 30 * time.Second

// DefaultSubmissionsPerSecond is a tenant's submission rate (items, not
// requests) when its key file entry sets no limit.
const DefaultSubmissionsPerSecond = 100_000

// Config wires a Server. Hub and Verifier are required.
type Config struct {
	Hub      *hub.Hub
	Verifier *auth.Verifier
	// Keys supplies per-tenant limits. Nil means every tenant has the
	// defaults. Server.ReloadKeys replaces it, with the Verifier's keys.
	Keys *auth.Keyring
	// Ready reports whether the gateway serves: /readyz answers 503 until it
	// does. Nil means always ready.
	Ready func() bool
	// Readiness, where set, decides /readyz in place of Ready and the
	// store check: ready, or why not, in the answer's reason (the gateway's
	// internal/readiness, which holds its own store check with
	// hysteresis). It must not block.
	Readiness func() (ready bool, reason string)
	// Logger receives request errors. Nil means discard.
	Logger *slog.Logger
	// Registry receives the metrics. The Server does not serve them: their
	// labels name tenants and boards, an operator's view, so the gateway
	// serves the Registry on a listener of its own (--metrics-addr), and
	// GET /metrics here answers 404. Nil means a new one.
	Registry *prometheus.Registry
	// MaxBody bounds request bodies. Zero means DefaultMaxBody.
	MaxBody int64
	// SubmissionsPerSecond is the default per-tenant rate. Zero means
	// DefaultSubmissionsPerSecond.
	SubmissionsPerSecond float64
	// ReadTimeout bounds how long a request's body may take to arrive,
	// from the end of its headers (http.Server.ReadHeaderTimeout bounds
	// those); past it the connection's reads fail. Not applied to /v1/ws,
	// whose hijacked connection keeps no HTTP deadline. Zero means
	// DefaultReadTimeout; negative means none.
	ReadTimeout time.Duration

	// Live tunes the WebSocket plane mounted at /v1/ws (internal/live).
	// The push interval is hub.Config.PushInterval: the most the hub's feed coalesces changes under load.
	Live live.Options

	// CursorKey seals the paging cursors the API hands out (top and scores'
	// next): CursorKeyLen bytes, the same on every node that serves one
	// tenant's reads, so a cursor from one node opens on another (the
	// gateway derives it with DeriveCursorKey: docs/SECURITY.md, "Cursors").
	// Nil means a random key of this process: cursors fail after a restart.
	CursorKey []byte

	// CatchupWait bounds how long a read or subscription that found
	// nothing waits for this node's replica to apply what the tenant's
	// stream held when it asked, before it answers unavailable rather than
	// not found (internal/catchup). Zero means catchup.DefaultWait.
	CatchupWait time.Duration

	// Static serves what is not API: the widget under /widget/ and, in demo
	// mode, the demo page at / and /demo/ (web.Handler). Nil means none.
	Static http.Handler
}

// Server is the HTTP handler of the gateway. Safe for concurrent use.
type Server struct {
	cfg     Config
	hub     *hub.Hub
	log     *slog.Logger
	metrics *metrics
	router  chi.Router
	methods map[string]map[string]bool   // route pattern → its methods: cors.go
	limits  *limiters                    // submissions
	boardW  *limiters                    // board settings writes
	identW  *limiters                    // identity writes (links, profiles)
	mints   mintLimiters                 // tokens minted: handler_tokens.go
	live    *live.Plane                  // /v1/ws: mounted, not wired to the hub's feed (see Feed)
	refused *refusal.Log                 // HTTP refusals (401, 403, 429), rate-limited
	keys    atomic.Pointer[auth.Keyring] // limits' keyring: see keyring, ReloadKeys
	reload  sync.Mutex                   // one ReloadKeys at a time
	cursors *cursorBox                   // seals and opens paging cursors: cursor.go
	fresh   *catchup.Gate                // reads that found nothing wait for this node's replica: catchup.go
}

// New returns a Server for cfg. It panics where cfg lacks Hub or Verifier:
// that is a wiring mistake, not input. It does not take the hub's change
// feed: its owner wires it, h.SetFeed(s.Feed()), so that a second Server
// over one hub never takes the feed from the first.
func New(cfg Config) *Server {
	if cfg.Hub == nil || cfg.Verifier == nil {
		panic("api: Config needs Hub and Verifier")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.SubmissionsPerSecond == 0 {
		cfg.SubmissionsPerSecond = DefaultSubmissionsPerSecond
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	s := &Server{cfg: cfg, hub: cfg.Hub, log: cfg.Logger, metrics: newMetrics(cfg.Registry, cfg.Hub),
		cursors: newCursorBox(cfg.CursorKey)}
	s.keys.Store(cfg.Keys)
	s.fresh = newGate(cfg.Registry, cfg.Hub, cfg.CatchupWait)
	s.limits, s.boardW, s.identW = newLimiters(s.keyring, cfg.SubmissionsPerSecond)
	cfg.Hub.Quotas().SetQuota(s.quota) // quota.go
	s.live = live.New(live.Config{Hub: cfg.Hub, Verifier: cfg.Verifier, Keyring: s.keyring, ErrorOf: s.protocolError,
		Logger: cfg.Logger, Registry: cfg.Registry, Catchup: s.fresh, Options: cfg.Live})
	s.refused = refusal.New(s.log, "http refused")
	s.router = s.routes()
	s.methods = routeMethods(s.router)
	return s
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

// Feed returns the consumer of the hub's change feed that pushes this
// Server's live views. Nothing is pushed until the owner wires it, once:
// h.SetFeed(s.Feed()).
func (s *Server) Feed() hub.Feed { return s.live.Feed() }

// CloseWebSockets closes every WebSocket with 1001 (going away) and refuses
// new ones, bounded by ctx (live.Plane.Close). http.Server.Shutdown does
// not close hijacked connections: the gateway calls this next to it.
func (s *Server) CloseWebSockets(ctx context.Context) error { return s.live.Close(ctx) }

// protocolError is the live plane's Config.ErrorOf: the code and message
// HTTP would answer for err.
func (s *Server) protocolError(err error) (string, string) {
	e := toError(err, s.log)
	return e.Code, e.Message
}

func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	r.Use(s.recoverer, s.measure, s.bodyDeadline, closeUnread, s.cors) // closeUnread: unread.go; cors: cors.go
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, map[string]string{"status": "ok"}) })
	r.Get("/readyz", s.readyz)
	r.Get("/openapi.json", serveOpenAPI)
	// No /metrics: the gateway serves the Registry on its own listener.
	r.Method(http.MethodGet, "/v1/ws", s.live) // outside the /v1 group: the WebSocket authenticates itself
	r.Get("/v1/stream", s.live.ServeStream)    // the same plane as Server-Sent Events; authenticates itself
	s.mountStatic(r)                           // the widget and the demo page: static.go
	r.Route("/v1", func(r chi.Router) {
		r.Use(s.authenticate, s.limitBody)
		r.Get("/boards", s.handle(s.listBoards))
		r.Route("/boards/{board}", func(r chi.Router) {
			r.Put("/", s.handle(s.rated(s.boardW, auth.RoleAdmin, s.putBoard)))
			r.Get("/", s.handle(s.getBoard))
			r.Delete("/", s.handle(s.rated(s.boardW, auth.RoleAdmin, s.deleteBoard)))
			r.Post("/reset", s.handle(s.rated(s.boardW, auth.RoleAdmin, s.resetBoard)))
			r.Post("/scores", s.handle(s.submit))
			r.Get("/scores", s.handle(s.scores))
			r.Get("/quarantine", s.handle(s.quarantine))
			r.Post("/quarantine/{qid}/approve", s.handle(s.approve))
			r.Post("/quarantine/{qid}/reject", s.handle(s.reject))
			r.Get("/top", s.handle(s.top))
			r.Get("/standings", s.handle(s.standings))
			r.Get("/ranks/{rank}", s.handle(s.atRank))
			r.Get("/score-rank", s.handle(s.scoreRank))
			r.Get("/members", s.handle(s.members))
			r.Get("/members/{member}", s.handle(s.member))
			r.Delete("/members/{member}", s.handle(s.rated(s.boardW, auth.RoleAdmin, s.removeMember)))
			r.Get("/members/{member}/around", s.handle(s.around))
			r.Get("/members/{member}/history", s.handle(s.history))
			s.mountDisputes(r) // disqualify, reinstate, settle: handler_disputes.go
		})
		r.Get("/schedules", s.handle(s.listSchedules))
		r.Route("/schedules/{schedule}", func(r chi.Router) {
			r.Put("/", s.handle(s.rated(s.boardW, auth.RoleAdmin, s.putSchedule)))
			r.Get("/", s.handle(s.getSchedule))
			r.Delete("/", s.handle(s.rated(s.boardW, auth.RoleAdmin, s.deleteSchedule)))
		})
		r.Get("/audit", s.handle(s.audit))
		r.Get("/tenant", s.handle(s.tenant))
		r.Post("/tokens", s.handle(s.mint)) // handler_tokens.go
		r.Post("/identities", s.handle(s.rated(s.identW, auth.RoleSubmit, s.link)))
		r.Get("/identities/{id}", s.handle(s.identity))
		r.Put("/members/{member}/profile", s.handle(s.rated(s.identW, auth.RoleSubmit, s.putProfile)))
		r.Get("/members/{member}/profile", s.handle(s.getProfile))
		r.Get("/members/{member}/personal-data", s.handle(s.personalData))
		r.Delete("/members/{member}/personal-data", s.handle(s.rated(s.identW, auth.RoleAdmin, s.erasePersonalData)))
	})
	r.NotFound(func(w http.ResponseWriter, r *http.Request) { writeError(w, notFound("no route %s", r.URL.Path)) })
	r.MethodNotAllowed(s.methodNotAllowed) // 405 with Allow: cors.go
	return r
}

// handlerFunc is a handler that returns its error for handle to write.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (s *Server) handle(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		err := authorize(r) // the table of effects: effects.go
		if err == nil {
			err = s.read(r, h(w, r), func() error { return h(w, r) })
		}
		if err != nil {
			e := toError(err, s.log)
			s.logRefusal(r, e)
			writeError(w, e)
		}
	}
}

// logRefusal logs a request refused for its scope (403) or a limit (429),
// rate-limited, with the tenant: an operator sees who is being turned away.
func (s *Server) logRefusal(r *http.Request, e *Error) {
	var reason string
	switch e.Status {
	case http.StatusForbidden:
		reason = refusal.Forbidden
	case http.StatusTooManyRequests:
		reason = refusal.RateLimited
	default:
		return
	}
	s.refused.Refused(reason, "tenant", scopeOf(r).Tenant, "method", r.Method,
		"path", truncate(r.URL.Path), "message", e.Message)
}

// readyzTimeout bounds the store check of one /readyz.
const readyzTimeout = 2 * time.Second

// readyz answers 200 {"ready":true} while the gateway serves and its store
// takes writes, else 503 {"ready":false,"reason":...}: not serving yet, NATS
// disconnected, JetStream disabled, or the store full. It names no tenant
// and no stream: it needs no token.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	reason := ""
	if s.cfg.Readiness != nil {
		if ok, why := s.cfg.Readiness(); !ok {
			reason = why
		}
	} else if s.cfg.Ready != nil && !s.cfg.Ready() {
		reason = "not serving yet, or shutting down"
	} else {
		ctx, cancel := context.WithTimeout(r.Context(), readyzTimeout)
		defer cancel()
		if err := s.hub.Writable(ctx); err != nil {
			reason = hubMessage(err)
		}
	}
	answer := wire.Ready{Ready: reason == "", Reason: reason, Warnings: s.warnings()}
	if reason != "" {
		writeJSON(w, http.StatusServiceUnavailable, answer)
		return
	}
	writeJSON(w, http.StatusOK, answer)
}

// warnings lists what works but needs an operator, for /readyz. It names
// no tenant: /readyz needs no token.
func (s *Server) warnings() []string {
	stale := 0
	for _, st := range s.cfg.Verifier.JWKSStatus() {
		if st.Stale() {
			stale++
		}
	}
	if stale == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the key sets (jwks_url) of %d tenants could not be fetched: the keys of their last good fetch verify", stale)}
}

type scopeKey struct{}

// authenticate verifies the bearer token and puts its scope in the context.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.Header.Values("Authorization")) > 1 {
			// Two credentials are ambiguous: a proxy and a client may each
			// read a different one. Refuse rather than pick.
			refuseConn(w, r)
			writeError(w, badRequest("Authorization: more than one header, want exactly one"))
			return
		}
		token, ok := bearer(r)
		if !ok {
			refuseConn(w, r)
			writeError(w, &Error{http.StatusUnauthorized, "unauthorized", "Authorization: want \"Bearer <token>\""})
			return
		}
		sc, err := s.cfg.Verifier.Verify(token)
		if err != nil {
			s.refused.Refused(refusal.Token, append(refusal.TokenAttrs(err, refusal.KeyTenant(s.keyring(), token)),
				"method", r.Method, "path", truncate(r.URL.Path))...)
			refuseConn(w, r)
			writeError(w, toError(err, s.log))
			return
		}
		connguard.BusyContext(r.Context()) // authenticated: the connection budget keeps it (internal/connguard)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeKey{}, sc)))
	})
}

// refuseConn closes the connection after a refused request that has a
// body, without reading the rest of it: net/http would otherwise read up
// to 256 KiB of it after the answer (also with "Connection: close"), and a
// client without credentials could hold the connection for the whole
// --read-timeout by sending it slowly. The read deadline in the past makes
// that read fail at once; the answer is still written.
func refuseConn(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if len(h) < 7 || !strings.EqualFold(h[:7], "bearer ") {
		return "", false
	}
	return h[7:], true
}

func scopeOf(r *http.Request) auth.Scope {
	sc, _ := r.Context().Value(scopeKey{}).(auth.Scope)
	return sc
}

func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
		next.ServeHTTP(w, r)
	})
}

// bodyDeadline gives a request with a body ReadTimeout to deliver it: it
// sets the connection's read deadline (http.ResponseController) and clears
// it once the body has been read to its end, so that a handler that runs
// longer is not cut off by it (net/http reads the connection in the
// background while a handler runs, and a deadline there would cancel the
// request). A body never read to its end keeps the deadline, which bounds
// what net/http discards after the handler. Requests without a body, and
// /v1/ws, whose connection is hijacked with whatever deadline it has, are
// left alone. O(1) per request and per body read.
func (s *Server) bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.ReadTimeout < 0 || r.Body == nil || r.Body == http.NoBody || r.URL.Path == "/v1/ws" {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(s.cfg.ReadTimeout)); err != nil {
			next.ServeHTTP(w, r) // a ResponseWriter without deadlines (a test recorder)
			return
		}
		r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody clears the connection's read deadline at the body's end.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// recoverer answers a panic with an internal error instead of a dropped
// connection, and logs it. Input never panics; this guards our own bugs.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", v)
				writeError(w, &Error{http.StatusInternalServerError, "internal", "internal error"})
			}
		}()
		next.ServeHTTP(w, r)
	})
}
