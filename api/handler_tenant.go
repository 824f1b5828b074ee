package api

import (
	"net/http"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/wire"
)

// tenant answers GET /v1/tenant (role admin): the operator console's panel.
// O(the gateway's connections).
func (s *Server) tenant(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	if !sc.Can(auth.RoleAdmin) {
		return forbidden("role admin: not granted")
	}
	var out wire.Tenant
	out.Tenant = sc.Tenant
	out.Limits.SubmissionsPerSecond = s.limits.perSecond(sc.Tenant)
	out.Limits.Connections = s.live.connCap(sc.Tenant)
	out.Limits.Boards = s.boardLimit(sc.Tenant)
	out.Boards = len(s.hub.Boards(sc.Tenant))
	out.Connections, out.Subscriptions = s.live.usage(sc.Tenant)
	writeJSON(w, http.StatusOK, out)
	return nil
}

// usage returns tenant's WebSocket connections on this gateway and their
// subscriptions by board.
func (l *live) usage(tenant string) (conns int, subs map[string]int) {
	subs = map[string]int{}
	l.mu.Lock()
	conns = l.tenants[tenant]
	all := make([]*wsConn, 0, len(l.conns))
	for c := range l.conns {
		all = append(all, c)
	}
	l.mu.Unlock()
	for _, c := range all {
		if sc, ok := c.current(); !ok || sc.Tenant != tenant {
			continue
		}
		c.mu.Lock()
		for _, s := range c.subs {
			subs[s.board]++
		}
		c.mu.Unlock()
	}
	return conns, subs
}
