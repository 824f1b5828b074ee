package api

import (
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

// tenantLimits is tenant's limits from the current key file; the zero
// Limits (every default) where there is none or the tenant is not in it.
func (s *Server) tenantLimits(tenant string) auth.Limits {
	if keys := s.keyring(); keys != nil {
		if lim, ok := keys.Limits(tenant); ok {
			return lim
		}
	}
	return auth.Limits{}
}

// quota is tenant's limits that the ledger enforces at apply time, defaults
// filled in: the hub stamps them on the events that could exceed them
// (hub.SetQuota), read at each write so that a reloaded key file takes
// effect on the next one.
func (s *Server) quota(tenant string) hub.Quota {
	l := s.tenantLimits(tenant)
	return hub.Quota{Profiles: l.ProfileLimit(), Aliases: l.AliasLimit(), Held: l.QuarantineLimit(),
		Boards: l.BoardLimit(), Schedules: l.ScheduleLimit()}
}
