package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"

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

// setReason says what the start waits for now, in /readyz's reason.
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
