package api

import (
	"context"
	"net/http"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/names"
)

// boardJSON is a board as the protocol shows it.
type boardJSON struct {
	Name          string      `json:"name"`
	Order         string      `json:"order"`
	SubscoreOrder string      `json:"subscore_order"`
	Policy        string      `json:"policy"`
	Tiebreak      string      `json:"tiebreak"`
	Windows       []string    `json:"windows"`
	Retention     int         `json:"retention"`
	StartsAt      string      `json:"starts_at,omitempty"`
	EndsAt        string      `json:"ends_at,omitempty"`
	Prizes        []hub.Prize `json:"prizes,omitempty"`
	Rules         *hub.Rules  `json:"rules,omitempty"`
	Members       int         `json:"members"`
}

func toBoardJSON(b hub.BoardInfo) boardJSON {
	s := b.Settings
	return boardJSON{b.Name, s.Order, s.SubscoreOrder, s.Policy, s.Tiebreak, s.Windows, s.Retention,
		s.StartsAt, s.EndsAt, s.Prizes, s.Rules, b.Members}
}

// settingsJSON is the body of PUT /v1/boards/{board}.
type settingsJSON struct {
	Order         string      `json:"order"`
	SubscoreOrder string      `json:"subscore_order"`
	Policy        string      `json:"policy"`
	Tiebreak      string      `json:"tiebreak"`
	Windows       []string    `json:"windows"`
	Retention     int         `json:"retention"`
	StartsAt      string      `json:"starts_at"`
	EndsAt        string      `json:"ends_at"`
	Prizes        []hub.Prize `json:"prizes"`
	Rules         *hub.Rules  `json:"rules"`
}

func (s *Server) putBoard(w http.ResponseWriter, r *http.Request) error {
	name, err := boardFor(r, auth.RoleAdmin)
	if err != nil {
		return err
	}
	var body settingsJSON
	if r.ContentLength != 0 {
		if err := decodeBody(r, &body); err != nil {
			return err
		}
	}
	tenant := scopeOf(r).Tenant
	info, err := s.hub.PutBoardUpTo(r.Context(), tenant, name, hub.Settings(body), s.boardLimit(tenant))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toBoardJSON(info))
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
	writeJSON(w, http.StatusOK, toBoardJSON(info))
	return nil
}

// Paging of GET /v1/boards.
const (
	defaultBoardsLimit = 100
	maxBoardsLimit     = 1000
)

// listBoards lists, in name order, a page of the tenant's boards that the
// token may read: ?limit= (1..1000, default 100) boards after the board
// name ?after=, with "next" (the cursor of the following page) while more
// follow.
func (s *Server) listBoards(w http.ResponseWriter, r *http.Request) error {
	sc := scopeOf(r)
	if !sc.Can(auth.RoleRead) {
		return forbidden("role read: not granted")
	}
	limit, err := intParam(r, "limit", defaultBoardsLimit, 1, maxBoardsLimit)
	if err != nil {
		return err
	}
	after := r.URL.Query().Get("after")
	if after != "" && !names.Valid(after) {
		return badRequest("after: %q is not a board name (%s)", truncate(after), names.Pattern)
	}
	infos, more := s.hub.BoardsPage(sc.Tenant, after, limit, sc.CanBoard)
	out := make([]boardJSON, len(infos))
	for i, b := range infos {
		out[i] = toBoardJSON(b)
	}
	body := map[string]any{"boards": out}
	if more {
		body["next"] = infos[len(infos)-1].Name
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

func (s *Server) deleteBoard(w http.ResponseWriter, r *http.Request) error {
	return s.boardAction(w, r, "deleted", s.hub.DeleteBoard)
}

func (s *Server) resetBoard(w http.ResponseWriter, r *http.Request) error {
	return s.boardAction(w, r, "reset", s.hub.Reset)
}

// boardAction runs an admin action on the route's board and answers
// {verb: board}.
func (s *Server) boardAction(w http.ResponseWriter, r *http.Request, verb string,
	act func(ctx context.Context, tenant, board string) error) error {
	name, err := boardFor(r, auth.RoleAdmin)
	if err != nil {
		return err
	}
	if err := act(r.Context(), scopeOf(r).Tenant, name); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{verb: name})
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
	if err := s.hub.RemoveMember(r.Context(), scopeOf(r).Tenant, name, m); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"removed": m})
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
