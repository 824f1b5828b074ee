package main

import (
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/connguard"
)

// maxConnsCeiling is the per-tenant WebSocket cap that --max-connections'
// default never exceeds, whatever the connection budget.
const maxConnsCeiling = 20_000

// listenAPI opens the API's listener at addr. Its connections count
// against guard from their first byte; with tlsCfg, TLS sits on top of the
// guarded listener, and the Guard recognises its connections through the
// *tls.Conn that net/http and the WebSocket handler hold (connguard's
// package doc), so that a TLS connection is marked and evicted as a plain
// one is.
func listenAPI(addr string, tlsCfg *tls.Config, guard *connguard.Guard) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, listenError("--addr", addr, err)
	}
	gl := guard.Listener(ln)
	if tlsCfg == nil {
		return gl, nil
	}
	return tls.NewListener(gl, tlsCfg), nil
}

// guardServer counts srv's requests against guard: a request in progress
// may be evicted for the budget until the API has verified its token
// (connguard's AuthConnState; api marks the request busy then), so that
// only an authenticated client holds a connection the budget cannot take
// back, whatever its path. It also makes srv speak HTTP/1.1 only.
func guardServer(srv *http.Server, guard *connguard.Guard) {
	srv.ConnState = guard.AuthConnState
	srv.ConnContext = connguard.ConnContext
	http1Only(srv)
}

// http1Only makes srv speak HTTP/1.1 only, with or without TLS: a
// WebSocket upgrades an HTTP/1.1 connection (RFC 8441, WebSockets over
// HTTP/2, is not spoken), and the connection budget counts one request per
// connection. An empty, non-nil TLSNextProto keeps net/http from adding
// "h2" to the TLS configuration's protocols; Protocols says the same to
// the Go versions that read it.
func http1Only(srv *http.Server) {
	var p http.Protocols
	p.SetHTTP1(true)
	srv.Protocols = &p
	srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
}

// connectionCaps returns the per-tenant WebSocket cap for tenants whose key
// file entry sets none: maxConns where set (--max-connections), else half
// the connection budget, at most maxConnsCeiling. Authenticated WebSockets
// are never evicted for the budget, so a cap at or above it would let one
// tenant (one read token) hold every connection: it logs a WARN for
// --max-connections and for each tenant whose key file cap reaches the
// budget. O(tenants).
func connectionCaps(maxConns, budget int, keys *auth.Keyring, log *slog.Logger) int {
	if maxConns == 0 {
		maxConns = min(max(budget/2, 1), maxConnsCeiling)
	} else if maxConns >= budget {
		log.Warn("--max-connections reaches the connection budget: one tenant's WebSockets can hold every connection",
			"max_connections", maxConns, "connection_budget", budget)
	}
	warnTenantCaps(keys, budget, log)
	return maxConns
}

// warnTenantCaps logs a WARN for each tenant whose key file cap on
// WebSockets reaches budget, at start and at each reload of the key file.
// O(tenants).
func warnTenantCaps(keys *auth.Keyring, budget int, log *slog.Logger) {
	for _, tenant := range keys.Tenants() {
		if l, _ := keys.Limits(tenant); l.Connections >= budget {
			log.Warn("a tenant's connections limit reaches the connection budget: its WebSockets can hold every connection",
				"tenant", tenant, "connections", l.Connections, "connection_budget", budget)
		}
	}
}
