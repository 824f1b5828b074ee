package api

import (
	"net/http"
	"slices"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/wire"
)

// link links aliases to a member. Role submit or admin links aliases that
// name nobody yet; merging members (an alias that already names another
// member) rewrites entries on every board, so only a token that may change
// every board (mayMerge) may; the hub decides which case it is at apply
// time, in stream order, as it decides that a token limited to boards
// reaches every board where the member ranks.
func (s *Server) link(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	var body wire.Identity
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if len(body.Aliases) > hub.MaxAliases {
		return badRequest("aliases: %d, at most %d", len(body.Aliases), hub.MaxAliases)
	}
	id, err := s.hub.LinkIn(r.Context(), sc.Tenant, body.Member, body.Aliases, mayMerge(sc), reachOf(sc))
	return s.reply(w, toIdentityJSON(id), err)
}

// identity answers GET /v1/identities/{id} (role submit or admin): 404,
// as for an id that names nobody, where a token limited to boards reaches
// none of the boards where the member ranks.
func (s *Server) identity(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	id, err := memberParam(r, "id")
	if err != nil {
		return err
	}
	ident, err := s.hub.Identity(sc.Tenant, id, reachOf(sc))
	return s.reply(w, toIdentityJSON(ident), err)
}

// toIdentityJSON is id as the protocol shows it: aliases never null.
func toIdentityJSON(id hub.Identity) wire.Identity {
	if id.Aliases == nil {
		id.Aliases = []string{}
	}
	return wire.Identity(id)
}

// mayMerge reports whether sc may merge members: role admin and a token
// that reaches every board (no boards claim, or the pattern "*"). A list of
// patterns that happens to cover every board today does not qualify: a
// board created tomorrow might fall outside it. O(patterns).
func mayMerge(sc auth.Scope) bool {
	return sc.Can(auth.RoleAdmin) && (sc.Boards == nil || slices.Contains(sc.Boards, "*"))
}
