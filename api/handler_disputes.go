package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/identity"
	"github.com/rankwire/rankwire/wire"
)

// Disputes and settlement (docs/PROTOCOL.md, Tournaments): admin routes
// that amend a board's standings until it is settled, and the audit log
// of every such action.

// mountDisputes mounts the amendment routes under /v1/boards/{board}:
// disqualify, reinstate, settle and void.
func (s *Server) mountDisputes(r chi.Router) {
	r.Post("/disqualify", s.handle(s.amendment(true, s.hub.Disputes().Disqualify)))
	r.Post("/reinstate", s.handle(s.amendment(true, s.hub.Disputes().Reinstate)))
	r.Post("/settle", s.handle(s.amendment(false, s.hub.Disputes().Settle)))
	r.Post("/void", s.handle(s.void))
}

// void answers POST .../void {"seq","reason"} (role admin): the member's
// entry becomes what its other submissions make of it; the answer is the
// admin action recorded.
func (s *Server) void(w http.ResponseWriter, r *http.Request) error {
	name, err := boardFor(r, auth.RoleAdmin)
	if err != nil {
		return err
	}
	var body wire.Void
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if body.Seq == 0 {
		return badRequest("seq: required, the seq a submission's result carried (1 or more)")
	}
	sc := scopeOf(r)
	var a hub.AdminAction
	if err := s.fresh.Write(r.Context(), sc.Tenant, func() (err error) {
		a, err = s.hub.Disputes().Void(r.Context(), sc.Tenant, hub.Amendment{Board: name, Reason: body.Reason, Sub: sc.Subject}, body.Seq)
		return err
	}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toAdminAction(name, a))
	return nil
}

// amendFunc is one of the hub's amendments.
type amendFunc func(ctx context.Context, tenant string, a hub.Amendment) (hub.AdminAction, error)

// amendment answers POST .../disqualify, .../reinstate ({"member","reason"})
// and .../settle ({"reason"}) (role admin) with the admin action recorded.
func (s *Server) amendment(withMember bool, act amendFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		name, err := boardFor(r, auth.RoleAdmin)
		if err != nil {
			return err
		}
		var body wire.Amendment
		if err := decodeBody(r, &body); err != nil {
			return err
		}
		if err := checkAmendment(withMember, body); err != nil {
			return err
		}
		sc := scopeOf(r)
		var a hub.AdminAction
		if err := s.fresh.Write(r.Context(), sc.Tenant, func() (err error) {
			a, err = act(r.Context(), sc.Tenant, hub.Amendment{Board: name, Member: body.Member, Reason: body.Reason, Sub: sc.Subject})
			return err
		}); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, toAdminAction(name, a))
		return nil
	}
}

// checkAmendment checks an amendment's body: member where the route takes
// one (and none where it does not); the reason the hub checks.
func checkAmendment(withMember bool, body wire.Amendment) error {
	switch {
	case !withMember && body.Member != "":
		return badRequest("member: settle takes no member")
	case !withMember:
		return nil
	case body.Member == "":
		return badRequest("member: required")
	}
	if p := identity.Reason(body.Member); p != "" {
		return badRequest("member: %s", p)
	}
	return nil
}

// audit answers GET /v1/audit?board=B&after=SEQ&limit=N (role admin): the
// board's admin actions, oldest first, paged by the last seq.
func (s *Server) audit(w http.ResponseWriter, r *http.Request) error {
	name, err := boardQuery(r, auth.RoleAdmin)
	if err != nil {
		return err
	}
	limit, err := intParam(r, "limit", 100, 1, hub.MaxAuditPage)
	if err != nil {
		return err
	}
	var after uint64
	if a := r.URL.Query().Get("after"); a != "" {
		if after, err = strconv.ParseUint(a, 10, 64); err != nil {
			return badRequest("after: %q is not a seq", truncate(a))
		}
	}
	acts, more, err := s.hub.Disputes().AdminActions(scopeOf(r).Tenant, name, after, limit)
	if err != nil {
		return err
	}
	out := wire.Audit{Actions: make([]wire.AdminAction, len(acts))}
	for i, a := range acts {
		out.Actions[i] = toAdminAction(name, a)
	}
	if more {
		out.Next = out.Actions[len(out.Actions)-1].Seq
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// boardQuery is boardFor for a board named by the query parameter board.
func boardQuery(r *http.Request, role auth.Role) (string, error) {
	name := r.URL.Query().Get("board")
	if name == "" {
		return "", badRequest("board: required")
	}
	return boardNamed(r, name, role)
}

func toAdminAction(board string, a hub.AdminAction) wire.AdminAction {
	out := wire.AdminAction{Seq: a.Seq, At: hub.FormatTime(a.At), Board: board, Action: a.Action, Member: a.Member,
		Sub: a.Sub, Reason: a.Reason, Revision: a.Revision, Voided: a.Voided}
	if a.QID != 0 {
		out.QID = strconv.FormatUint(a.QID, 10)
	}
	return out
}
