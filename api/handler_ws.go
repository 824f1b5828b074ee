package api

import (
	"errors"
	"net/http"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/auth"
)

// serveWS upgrades GET /v1/ws to a WebSocket of live views (PROTOCOL.md,
// "Live views over WebSocket"). A token in access_token is checked before
// the upgrade, so a tenant at its connection cap is refused with 429;
// without one, the first message must be auth within Config.AuthTimeout.
// The origin check is coder/websocket's: the request's own host, or
// Config.AllowedOrigins. The handler returns once the connection is up,
// so that net/http frees the request's buffers; a goroutine of the
// connection's own (wsConn.serve) runs it from there.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	l := s.live
	var sc *auth.Scope
	var refused error
	if tok := r.URL.Query().Get("access_token"); tok != "" {
		v, err := s.cfg.Verifier.Verify(tok)
		refused = err
		if err == nil {
			refused = mayConnect(v)
			sc = &v
		}
		if refused == nil && !l.admit(v.Tenant) {
			writeError(w, &Error{http.StatusTooManyRequests, "rate_limited", "tenant " + v.Tenant + ": at its WebSocket connection cap"})
			return
		}
	}
	fw := &flowWriter{ResponseWriter: w, slowTO: l.slowTO}
	ws, err := websocket.Accept(fw, r, &websocket.AcceptOptions{OriginPatterns: l.origins})
	if err != nil {
		if sc != nil && refused == nil {
			l.release(sc.Tenant)
		}
		return // Accept answered the request
	}
	c := newWSConn(l, ws, fw.conn)
	if !l.track(c) {
		ws.Close(closeGoingAway, "server shutting down")
		return
	}
	go func() {
		defer l.untrack(c)
		c.serve(sc, refused)
	}()
}

// mayConnect reports whether a valid token may open a connection: it needs
// the read role.
func mayConnect(sc auth.Scope) error {
	if !sc.Can(auth.RoleRead) {
		return errors.New("token lacks the read role")
	}
	return nil
}
