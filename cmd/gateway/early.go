package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rankwire/rankwire/internal/redact"
	"github.com/rankwire/rankwire/wire"
)

// startingRetryAfter is the Retry-After, in seconds, of the answers the
// API's listener gives while the hub starts.
const startingRetryAfter = "5"

// handoff is the API listener's handler: the early handler from the moment
// the listener opens, the API once the hub is ready (handTo). The listener,
// its connection guard and its TLS never change: only what answers does,
// so that a liveness probe is answered while a clustered node waits for
// its quorum.
type handoff struct {
	h     atomic.Pointer[http.Handler]
	early *earlyHandler
}

// newHandoff returns a handoff serving the early handler, whose /readyz
// gives reason until setReason changes it.
func newHandoff(reason string) *handoff {
	e := &earlyHandler{}
	e.reason.Store(&reason)
	s := &handoff{early: e}
	var h http.Handler = e
	s.h.Store(&h)
	return s
}

// ServeHTTP hands r to the handler in place.
func (s *handoff) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*s.h.Load()).ServeHTTP(w, r) }

// setReason says what the start waits for now, in /readyz's reason. Safe
// for concurrent use.
func (s *handoff) setReason(what string) {
	r := "starting: " + what
	s.early.reason.Store(&r)
}

// handTo makes h answer every request from now on.
func (s *handoff) handTo(h http.Handler) { s.h.Store(&h) }

// earlyHandler answers while the hub starts: /healthz 200 (the process
// lives), /readyz 503 with what the start waits for, any other path 503
// unavailable with the protocol's error body and a Retry-After.
type earlyHandler struct {
	reason atomic.Pointer[string]
}

func (e *earlyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		earlyJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	case "/readyz":
		w.Header().Set("Retry-After", startingRetryAfter)
		earlyJSON(w, http.StatusServiceUnavailable, wire.Ready{Ready: false, Reason: *e.reason.Load()})
	default:
		w.Header().Set("Retry-After", startingRetryAfter)
		earlyJSON(w, http.StatusServiceUnavailable, wire.ErrorBody{Error: wire.ErrorDetail{Code: wire.CodeUnavailable,
			Message: "the gateway is starting (" + *e.reason.Load() + "): retry"}})
	}
}

func earlyJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client hung up: nothing to do
}

// hubWait says what starting the hub waits for, given cfg: /readyz's
// reason while hub.Start runs.
func hubWait(cfg Config) string {
	switch {
	case cfg.NATSURL != "":
		return fmt.Sprintf("connecting to NATS at %s and loading tenants", redact.URLs(cfg.NATSURL))
	case cfg.Cluster != "":
		return fmt.Sprintf("waiting for a majority of cluster %q (routes %d) and loading tenants", cfg.Cluster, len(cfg.Routes))
	default:
		return "opening the embedded NATS and loading tenants"
	}
}

// listenError names flag and addr once in err, a failed net.Listen's:
// net's error repeats the address ("listen tcp ADDR: bind: ..."), so the
// cause it wraps is kept, still matching errors.Is (syscall.EADDRINUSE).
func listenError(flag, addr string, err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err
	}
	return fmt.Errorf("%s %s: %w", flag, addr, err)
}

// routeWatchEvery is how often a clustered node waiting for its majority
// looks at its routes and says who answered (in /readyz and the log).
const routeWatchEvery = 2 * time.Second

// watchRoutes starts, for a clustered node, a look every routeWatchEvery at
// which routes accept a TCP connection, setting /readyz's reason through set
// ("waiting for a majority of cluster "c" (2 of 3 routes): answered a") and
// logging it. The returned stop ends it and waits. Without a cluster it
// does nothing. A route that accepts may still refuse the cluster's secret,
// or be paused (its kernel accepts for it): the answer says who is up at
// all, which is what an operator needs while a start waits.
func watchRoutes(cfg Config, set func(string), log *slog.Logger) (stop func()) {
	if cfg.Cluster == "" || len(cfg.Routes) == 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(routeWatchEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			answered, silent := dialRoutes(ctx, cfg.Routes)
			if ctx.Err() != nil {
				return // the hub started meanwhile: its reason is set
			}
			what := routesWait(cfg.Cluster, len(cfg.Routes), answered)
			set(what + "; loading tenants after")
			log.Info("starting: "+what, "answered", answered, "silent", silent)
		}
	})
	return func() { cancel(); wg.Wait() }
}

// routesWait is /readyz's reason while a cluster's majority is awaited.
func routesWait(cluster string, routes int, answered []string) string {
	who := "none"
	if len(answered) > 0 {
		who = strings.Join(answered, ", ")
	}
	return fmt.Sprintf("waiting for a majority of cluster %q (%d of %d routes): answered %s", cluster, routes/2+1, routes, who)
}

// dialRoutes dials every route at once, within a second, and returns the
// host:port of those that accepted and of those that did not, in the
// routes' order.
func dialRoutes(ctx context.Context, routes []string) (answered, silent []string) {
	ok := make([]bool, len(routes))
	hosts := make([]string, len(routes))
	var wg sync.WaitGroup
	for i, r := range routes {
		hosts[i] = r
		if u, err := url.Parse(r); err == nil && u.Host != "" {
			hosts[i] = u.Host
		}
		wg.Go(func() {
			d := net.Dialer{Timeout: time.Second}
			if c, err := d.DialContext(ctx, "tcp", hosts[i]); err == nil {
				c.Close()
				ok[i] = true
			}
		})
	}
	wg.Wait()
	for i, h := range hosts {
		if ok[i] {
			answered = append(answered, h)
		} else {
			silent = append(silent, h)
		}
	}
	return answered, silent
}
