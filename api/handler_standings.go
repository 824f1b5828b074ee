package api

import (
	"net/http"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

// standingRowJSON is a row of a board's standings with its prize.
type standingRowJSON struct {
	rowJSON
	Prize string `json:"prize,omitempty"`
}

// standingsJSON is the answer of GET /v1/boards/{board}/standings.
type standingsJSON struct {
	Final   bool              `json:"final"`
	EndedAt *string           `json:"ended_at"` // null until the board's end passed
	Seq     uint64            `json:"seq"`
	Total   int               `json:"total"`
	Rows    []standingRowJSON `json:"rows"`
}

// standings answers a board's standings with prizes; final once its end
// passed by more than the longest write retry (hub.Standings).
func (s *Server) standings(w http.ResponseWriter, r *http.Request) error {
	board, err := boardFor(r, auth.RoleRead)
	if err != nil {
		return err
	}
	limit, err := intParam(r, "limit", 100, 1, MaxLimit)
	if err != nil {
		return err
	}
	offset, err := intParam(r, "offset", 0, 0, maxOffset)
	if err != nil {
		return err
	}
	st, err := s.hub.Standings(scopeOf(r).Tenant, board, offset, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toStandingsJSON(st))
	return nil
}

func toStandingsJSON(st hub.Standings) standingsJSON {
	out := standingsJSON{Final: st.Final, Seq: st.Seq, Total: st.Total, Rows: make([]standingRowJSON, len(st.Rows))}
	if st.EndedAt != "" {
		out.EndedAt = &st.EndedAt
	}
	for i, r := range st.Rows {
		out.Rows[i] = standingRowJSON{toRowJSON(r.Row), r.Prize}
	}
	return out
}
