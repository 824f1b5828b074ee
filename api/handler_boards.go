package api

import (
	"context"
	"net/http"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/names"
	"github.com/rankwire/rankwire/wire"
)

// toBoard is a board as the protocol shows it.
func toBoard(b hub.BoardInfo) wire.Board {
	s := b.Settings
	return wire.Board{Name: b.Name, Order: s.Order, SubscoreOrder: s.SubscoreOrder, Policy: s.Policy,
		Tiebreak: s.Tiebreak, Windows: s.Windows, Retention: s.Retention, TimeZone: s.TimeZone, WeekStarts: s.WeekStarts,
		StartsAt: s.StartsAt, EndsAt: s.EndsAt,
		Prizes: toPrizes(s.Prizes), Rules: (*wire.Rules)(s.Rules), Members: b.Members}
}

// toSettings is the hub's form of a PUT /v1/boards/{board} body.
func toSettings(w wire.Settings) hub.Settings {
	var prizes []hub.Prize
	for _, p := range w.Prizes {
		prizes = append(prizes, hub.Prize(p))
	}
	return hub.Settings{Order: w.Order, SubscoreOrder: w.SubscoreOrder, Policy: w.Policy, Tiebreak: w.Tiebreak,
		Windows: w.Windows, Retention: w.Retention, TimeZone: w.TimeZone, WeekStarts: w.WeekStarts, StartsAt: w.StartsAt, EndsAt: w.EndsAt, Prizes: prizes,
		Rules: (*hub.Rules)(w.Rules)}
}

// toPrizes is prizes as the protocol shows them; nil for none.
func toPrizes(prizes []hub.Prize) []wire.Prize {
	var out []wire.Prize
	for _, p := range prizes {
		out = append(out, wire.Prize(p))
	}
	return out
}

func (s *Server) putBoard(w http.ResponseWriter, r *http.Request) error {
	name, err := boardFor(r, auth.RoleAdmin)
	if err != nil {
		return err
	}
	var body wire.Settings
	if r.ContentLength != 0 {
		if err := decodeBody(r, &body); err != nil {
			return err
		}
	}
	tenant := scopeOf(r).Tenant
	info, err := s.hub.PutBoardUpTo(r.Context(), tenant, name, toSettings(body), s.boardLimit(tenant))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toBoard(info))
	return nil
}

func (s *Server) getBoard(w http.ResponseWriter, r *http.Request) error {
	name, err := boardFor(r, auth.RoleRead)
	if err != nil {
		return err
	}
	info, err := s.hub.Board(scopeOf(r).Tenant, name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toBoard(info))
	return nil
}

// Paging of GET /v1/boards.
const (
	defaultBoardsLimit = wire.DefaultBoardsLimit
	maxBoardsLimit     = wire.MaxBoardsLimit
)

// listBoards lists, in name order, a page of the tenant's boards that the
// token may read: ?limit= (1..1000, default 100) boards after the board
// name ?after=, with "next" (the cursor of the following page) while more
// follow.
func (s *Server) listBoards(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	limit, err := intParam(r, "limit", defaultBoardsLimit, 1, maxBoardsLimit)
	if err != nil {
		return err
	}
	after := r.URL.Query().Get("after")
	if after != "" && !names.Valid(after) {
		return badRequest("after: %q is not a board name (%s)", truncate(after), names.Pattern)
	}
	infos, more := s.hub.BoardsPage(sc.Tenant, after, limit, sc.CanBoard)
	body := wire.BoardList{Boards: make([]wire.Board, len(infos))}
	for i, b := range infos {
		body.Boards[i] = toBoard(b)
	}
	if more {
		body.Next = infos[len(infos)-1].Name
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

func (s *Server) deleteBoard(w http.ResponseWriter, r *http.Request) error {
	return s.boardAction(w, r, func(b string) any { return wire.Deleted{Deleted: b} }, s.hub.DeleteBoard)
}

func (s *Server) resetBoard(w http.ResponseWriter, r *http.Request) error {
	return s.boardAction(w, r, func(b string) any { return wire.ResetDone{Reset: b} }, s.hub.Reset)
}

// boardAction runs an admin action on the route's board and answers
// answer(board).
func (s *Server) boardAction(w http.ResponseWriter, r *http.Request, answer func(board string) any,
	act func(ctx context.Context, tenant, board string) error) error {
	name, err := boardFor(r, auth.RoleAdmin)
	if err != nil {
		return err
	}
	tenant := scopeOf(r).Tenant
	if err := s.fresh.Write(r.Context(), tenant, func() error { return act(r.Context(), tenant, name) }); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, answer(name))
	return nil
}

func (s *Server) removeMember(w http.ResponseWriter, r *http.Request) error {
	name, err := boardFor(r, auth.RoleAdmin)
	if err != nil {
		return err
	}
	m, err := memberParam(r, "member")
	if err != nil {
		return err
	}
	tenant := scopeOf(r).Tenant
	if err := s.fresh.Write(r.Context(), tenant, func() error { return s.hub.RemoveMember(r.Context(), tenant, name, m) }); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.Removed{Removed: m})
	return nil
}

// boardLimit is tenant's board limit from the key file, or the default.
func (s *Server) boardLimit(tenant string) int {
	if keys := s.keyring(); keys != nil {
		if lim, ok := keys.Limits(tenant); ok {
			return lim.BoardLimit()
		}
	}
	return auth.DefaultBoards
}
