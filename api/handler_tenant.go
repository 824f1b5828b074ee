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
	out.Limits.Connections = s.live.ConnectionCap(sc.Tenant)
	out.Limits.Boards = s.boardLimit(sc.Tenant)
	out.Boards = len(s.hub.Boards(sc.Tenant))
	out.Connections, out.Subscriptions = s.live.Usage(sc.Tenant)
	writeJSON(w, http.StatusOK, out)
	return nil
}
