package api

import (
	"net/http"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/wire"
)

// putProfile answers PUT /v1/members/{member}/profile (role submit or
// admin): the profile replaces the member's previous one. A token limited
// to boards must reach every board where the member ranks: the hub decides
// at apply time and answers 403 naming the board.
func (s *Server) putProfile(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	member, err := memberParam(r, "member")
	if err != nil {
		return err
	}
	var body wire.Profile
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	p, err := s.hub.PutProfileIn(r.Context(), sc.Tenant, member, hub.Profile(body), reachOf(sc))
	return s.reply(w, wire.Profile(p), err)
}

// getProfile answers GET /v1/members/{member}/profile (any role). A token
// limited to boards reads only members that rank on one of them: for
// others it answers 404, as for a member with no profile.
func (s *Server) getProfile(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	member, err := memberParam(r, "member")
	if err != nil {
		return err
	}
	p, err := s.hub.Privacy().Profile(sc.Tenant, member, reachOf(sc))
	return s.reply(w, wire.Profile(p), err)
}
