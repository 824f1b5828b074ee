package live

import (
	"context"
	"errors"
	"net/http"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/connguard"
	"github.com/rankwire/rankwire/internal/refusal"
	"github.com/rankwire/rankwire/internal/wsflow"
	"github.com/rankwire/rankwire/wire"
)

// ServeHTTP upgrades a GET (api mounts it at /v1/ws) to a WebSocket of
// live views (PROTOCOL.md, "Live views over WebSocket"). A browser sees no HTTP status on a refused
// upgrade, so every refusal of a well-formed upgrade is an upgrade that
// closes at once, before a message is read or a byte of data written:
// 4003 for a refused origin (origin.go, run here, not by
// coder/websocket) or a token in access_token that may not connect, 4029
// for a tenant at its connection cap. Without access_token, the first
// message must be auth within Options.AuthTimeout. The handler returns once
// the connection is up, so that net/http frees the request's buffers; a
// goroutine of the connection's own (wsConn.serve) runs it from there.
func (p *Plane) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sc, refused := p.admitRequest(r)
	fw := &wsflow.Writer{ResponseWriter: w, SlowTimeout: p.slowTO}
	var c *wsConn // set before its read loop, which alone calls OnPongReceived, starts
	ws, err := websocket.Accept(fw, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // origins checked above
		OnPongReceived:     func(ctx context.Context, b []byte) { c.heardPong(ctx, b) },
	})
	if err != nil {
		if sc != nil {
			p.release(sc.Tenant)
		}
		return // Accept answered the request: not a WebSocket upgrade
	}
	c = newWSConn(p, ws, fw.Conn())
	if sc == nil && refused == nil {
		// Until its auth message it is as idle as a connection that sent
		// nothing: the connection budget may evict it (wsConn.setScope
		// marks it busy).
		connguard.Waiting(fw.Conn().Conn)
	}
	if !p.track(c) {
		p.metrics.closed(wire.CloseGoingAway)
		ws.Close(websocket.StatusCode(wire.CloseGoingAway), "server shutting down")
		if sc != nil {
			p.release(sc.Tenant)
		}
		return
	}
	go func() {
		defer p.untrack(c)
		c.serve(sc, refused)
	}()
}

// admitRequest checks an upgrade request's origin and its access_token,
// if any, and counts an admitted token's connection against its tenant's
// cap. It returns the admitted scope (nil: none, or refused) or the close
// that refuses the connection, logging the refusal.
func (p *Plane) admitRequest(r *http.Request) (*auth.Scope, *closeError) {
	if origin, ok := p.originAllowed(r); !ok {
		p.refusals.Refused(refusal.Origin, "origin", truncate(origin), "host", truncate(r.Host))
		e := newClose(wire.CloseForbidden, "origin refused: "+origin)
		return nil, &e
	}
	toks := r.URL.Query()["access_token"]
	if len(toks) > 1 { // ambiguous, as two Authorization headers are
		p.refusals.Refused(refusal.Token, "reason", "access_token given more than once")
		e := newClose(wire.CloseForbidden, "access_token: more than one, want exactly one")
		return nil, &e
	}
	tok := r.URL.Query().Get("access_token")
	if tok == "" {
		return nil, nil
	}
	sc, err := p.admitToken(tok)
	if errors.Is(err, errCapped) {
		e := newClose(wire.CloseOverLimit, "tenant at its connection cap")
		return nil, &e
	}
	if err != nil {
		e := tokenClose(err)
		return nil, &e
	}
	return &sc, nil
}

// errCapped is admitToken's refusal of a valid token whose tenant is at
// its connection cap.
var errCapped = errors.New("tenant at its connection cap")

// admitToken verifies a token that opens a connection (a WebSocket's
// access_token or an event stream's token) and counts it against its
// tenant's cap, logging a refusal: the one admission both transports
// share. Its error is the token's, or errCapped.
func (p *Plane) admitToken(tok string) (auth.Scope, error) {
	sc, err := p.verifier.Verify(tok)
	if err == nil {
		err = mayConnect(sc)
	}
	if err != nil {
		tenant := sc.Tenant
		if tenant == "" {
			tenant = refusal.KeyTenant(p.keyring(), tok)
		}
		p.refusals.Refused(refusal.Token, refusal.TokenAttrs(err, tenant)...)
		return sc, err
	}
	if !p.admit(sc.Tenant) {
		p.refusals.Refused(refusal.Cap, "tenant", sc.Tenant)
		return sc, errCapped
	}
	return sc, nil
}
