package api

import (
	"net/http"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

// profileJSON is a member's public profile, as PUT takes it and GET and
// rows show it.
type profileJSON struct {
	Name    string `json:"name"`
	Avatar  string `json:"avatar,omitempty"`
	Country string `json:"country,omitempty"`
}

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
	var body profileJSON
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	p, err := s.hub.PutProfile(r.Context(), sc.Tenant, member, hub.Profile(body))
	return s.reply(w, profileJSON(p), err)
}

// getProfile answers GET /v1/members/{member}/profile (any role).
func (s *Server) getProfile(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	member, err := memberParam(r, "member")
	if err != nil {
		return err
	}
	p, err := s.hub.Profile(sc.Tenant, member)
	return s.reply(w, profileJSON(p), err)
}
