package api

import (
	"net/http"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/wire"
)

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
	st, err := s.hub.Disputes().Standings(scopeOf(r).Tenant, board, offset, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toStandings(st))
	return nil
}

// toStandings is st as the protocol shows it.
func toStandings(st hub.Standings) wire.Standings {
	out := wire.Standings{Final: st.Final, Settled: st.Settled, Revision: st.Revision, Seq: st.Seq, Total: st.Total,
		Rows: make([]wire.StandingRow, len(st.Rows))}
	if st.EndedAt != "" {
		out.EndedAt = &st.EndedAt
	}
	for i, r := range st.Rows {
		out.Rows[i] = wire.StandingRow{Row: toRow(r.Row), Prize: r.Prize, PrizeHeld: r.PrizeHeld}
	}
	return out
}
