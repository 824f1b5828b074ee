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

// personalData answers GET /v1/members/{member}/personal-data (role
// admin): what the tenant holds about the member. A token limited to boards
// reads only members that rank on one of them (404 for others).
func (s *Server) personalData(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	member, err := memberParam(r, "member")
	if err != nil {
		return err
	}
	pd, err := s.hub.Privacy().PersonalData(sc.Tenant, member, reachOf(sc))
	return s.reply(w, toPersonalJSON(pd), err)
}

// erasePersonalData answers DELETE /v1/members/{member}/personal-data (role
// admin): the member's profile and linked aliases are erased everywhere
// (docs/SECURITY.md, "Personal data"); it answers once this node's
// snapshot no longer holds them. A token limited to boards must reach every
// board where the member ranks (403 naming the board).
func (s *Server) erasePersonalData(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	member, err := memberParam(r, "member")
	if err != nil {
		return err
	}
	e, err := s.hub.Privacy().Erase(r.Context(), sc.Tenant, member, reachOf(sc))
	return s.reply(w, wire.Erasure(e), err)
}

// toPersonalJSON is pd as the protocol shows it: lists never null.
func toPersonalJSON(pd hub.PersonalData) wire.PersonalData {
	out := wire.PersonalData{Member: pd.Member, Aliases: pd.Aliases, Entries: []wire.PersonalEntry{}}
	if out.Aliases == nil {
		out.Aliases = []string{}
	}
	if pd.Profile != nil {
		p := wire.Profile(*pd.Profile)
		out.Profile = &p
	}
	for _, e := range pd.Entries {
		out.Entries = append(out.Entries, wire.PersonalEntry(e))
	}
	return out
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
