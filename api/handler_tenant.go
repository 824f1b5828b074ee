package api

import (
	"net/http"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/wire"
)

// tenant answers GET /v1/tenant (role admin): the operator console's panel.
// O(the gateway's connections + the tenant's alias sets and boards).
func (s *Server) tenant(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	if !sc.Can(auth.RoleAdmin) {
		return forbidden("role admin: not granted")
	}
	var out wire.Tenant
	out.Tenant = sc.Tenant
	l := s.tenantLimits(sc.Tenant)
	out.Limits = wire.TenantLimits{SubmissionsPerSecond: s.limits.perSecond(sc.Tenant),
		Connections: s.live.ConnectionCap(sc.Tenant), Boards: s.boardLimit(sc.Tenant),
		Profiles: l.ProfileLimit(), Aliases: l.AliasLimit(), Quarantine: l.QuarantineLimit(),
		BoardWritesPerSecond: s.boardW.perSecond(sc.Tenant), IdentityWritesPerSecond: s.identW.perSecond(sc.Tenant)}
	u, _ := s.hub.Usage(sc.Tenant) // zero for a tenant with no stream yet
	out.Boards = u.Boards
	out.Connections, out.Subscriptions = s.live.Usage(sc.Tenant)
	out.Usage = wire.TenantUsage{
		Boards:      wire.Use{Used: u.Boards, Limit: out.Limits.Boards},
		Profiles:    wire.Use{Used: u.Profiles, Limit: out.Limits.Profiles},
		Aliases:     wire.Use{Used: u.Aliases, Limit: out.Limits.Aliases},
		Quarantine:  wire.Use{Used: u.HeldMost, Limit: out.Limits.Quarantine},
		Connections: wire.Use{Used: out.Connections, Limit: out.Limits.Connections},
		Members:     u.Members,
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
