package api

import (
	"net/http"

	"github.com/rankwire/rankwire/auth"
)

// tenantJSON answers GET /v1/tenant: the tenant's limits in force and
// what it uses of them on this gateway.
type tenantJSON struct {
	Tenant string `json:"tenant"`
	Limits struct {
		SubmissionsPerSecond float64 `json:"submissions_per_second"`
		Connections          int     `json:"connections"`
		Boards               int     `json:"boards"`
	} `json:"limits"`
	Boards        int            `json:"boards"`
	Connections   int            `json:"connections"`   // this gateway's WebSockets of the tenant
	Subscriptions map[string]int `json:"subscriptions"` // this gateway's live subscriptions by board
}

// tenant answers GET /v1/tenant (role admin): the operator console's panel.
// O(the gateway's connections).
func (s *Server) tenant(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	if !sc.Can(auth.RoleAdmin) {
		return forbidden("role admin: not granted")
	}
	var out tenantJSON
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
