package api

import (
	"net/http"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/wire"
)

// putProfile answers PUT /v1/members/{member}/profile (role submit or
// admin): the profile replaces the member's previous one.
func (s *Server) putProfile(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	if !sc.Can(auth.RoleSubmit) {
		return forbidden("role submit or admin: not granted")
	}
	member, err := memberParam(r, "member")
	if err != nil {
		return err
	}
	var body wire.Profile
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	p, err := s.hub.PutProfile(r.Context(), sc.Tenant, member, hub.Profile(body))
	return s.reply(w, wire.Profile(p), err)
}

// getProfile answers GET /v1/members/{member}/profile (any role).
func (s *Server) getProfile(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	member, err := memberParam(r, "member")
	if err != nil {
		return err
	}
	p, err := s.hub.Profile(sc.Tenant, member)
	return s.reply(w, wire.Profile(p), err)
}
