package api

import (
	"net/http"

	"github.com/rankwire/rankwire/auth"

	"github.com/rankwire/rankwire/wire"
)

// tenant answers GET /v1/tenant (role admin): the operator console's panel.
// A token limited to boards sees only those boards: their number, their
// subscriptions and the connections subscribed to one of them (the table of
// effects: ReachNone lists only what the token reaches). O(the gateway's
// connections + the tenant's boards).
func (s *Server) tenant(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	var out wire.Tenant
	out.Tenant = sc.Tenant
	l := s.tenantLimits(sc.Tenant)
	out.Limits = wire.TenantLimits{SubmissionsPerSecond: s.limits.perSecond(sc.Tenant),
		Connections: s.live.ConnectionCap(sc.Tenant), Boards: s.boardLimit(sc.Tenant),
		Schedules: l.ScheduleLimit(), Profiles: l.ProfileLimit(), Aliases: l.AliasLimit(), Quarantine: l.QuarantineLimit(),
		BoardWritesPerSecond: s.boardW.perSecond(sc.Tenant), IdentityWritesPerSecond: s.identW.perSecond(sc.Tenant),
		TokenMintsPerMinute: l.TokenMintLimit()}
	u, _ := s.hub.Quotas().Usage(sc.Tenant) // zero for a tenant with no stream yet
	out.Boards = u.Boards
	if sc.Boards == nil {
		out.Connections, out.Subscriptions = s.live.Usage(sc.Tenant)
	} else {
		out.Boards = s.reachedBoards(sc)
		out.Connections, out.Subscriptions = s.live.UsageIn(sc.Tenant, sc.CanBoard)
	}
	out.Usage = wire.TenantUsage{
		Boards:      wire.Use{Used: out.Boards, Limit: out.Limits.Boards},
		Schedules:   wire.Use{Used: u.Schedules, Limit: out.Limits.Schedules},
		Profiles:    wire.Use{Used: u.Profiles, Limit: out.Limits.Profiles},
		Aliases:     wire.Use{Used: u.Aliases, Limit: out.Limits.Aliases},
		Quarantine:  wire.Use{Used: u.HeldMost, Limit: out.Limits.Quarantine},
		Connections: wire.Use{Used: out.Connections, Limit: out.Limits.Connections},
		Members:     u.Members,
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// reachedBoards counts the tenant's boards sc reaches. O(boards).
func (s *Server) reachedBoards(sc auth.Scope) int {
	n := 0
	for _, b := range s.hub.Boards(sc.Tenant) {
		if sc.CanBoard(b.Name) {
			n++
		}
	}
	return n
}
