package api

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/wire"
)

// quarantine answers GET .../quarantine?limit=100&after=QID (role admin).
func (s *Server) quarantine(w http.ResponseWriter, r *http.Request) error {
	name, err := boardFor(r, auth.RoleAdmin)
	if err != nil {
		return err
	}
	limit, err := intParam(r, "limit", 100, 1, hub.MaxHeldPage)
	if err != nil {
		return err
	}
	var after uint64
	if a := r.URL.Query().Get("after"); a != "" {
		if after, err = parseQID("after", a); err != nil {
			return err
		}
	}
	rows, more, err := s.hub.Disputes().Quarantine(scopeOf(r).Tenant, name, after, limit)
	if err != nil {
		return err
	}
	out := wire.Quarantine{Rows: make([]wire.Held, len(rows))}
	for i, h := range rows {
		out.Rows[i] = wire.Held{QID: strconv.FormatUint(h.QID, 10), Member: h.Member, Score: h.Score,
			Subscore: h.Subscore, Reason: h.Reason.String(), At: hub.FormatTime(h.At)}
	}
	if more {
		out.Next = out.Rows[len(out.Rows)-1].QID
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// approve answers POST .../quarantine/{qid}/approve (role admin), with an
// optional body {"reason"}: the submission is ranked now, and the answer
// is its result. The decision, its reason and the token's sub are recorded
// in the board's audit (GET /v1/audit).
func (s *Server) approve(w http.ResponseWriter, r *http.Request) error {
	d, err := decisionOf(r)
	if err != nil {
		return err
	}
	tenant := scopeOf(r).Tenant
	var res hub.Result
	if err := s.fresh.Write(r.Context(), tenant, func() (err error) {
		res, err = s.hub.Disputes().Approve(r.Context(), tenant, d)
		return err
	}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toResults([]hub.Result{res})[0])
	return nil
}

// reject answers POST .../quarantine/{qid}/reject (role admin), with an
// optional body {"reason"}, recorded as approve's is.
func (s *Server) reject(w http.ResponseWriter, r *http.Request) error {
	d, err := decisionOf(r)
	if err != nil {
		return err
	}
	tenant := scopeOf(r).Tenant
	if err := s.fresh.Write(r.Context(), tenant, func() error { return s.hub.Disputes().Reject(r.Context(), tenant, d) }); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.Rejected{QID: strconv.FormatUint(d.QID, 10), Rejected: true})
	return nil
}

// decisionOf reads a decision's route and optional body: no body, an
// empty one or {} decide without a reason; the hub checks a reason as an
// amendment's (1..256 bytes of printable UTF-8).
func decisionOf(r *http.Request) (hub.Decision, error) {
	name, qid, err := qidRoute(r)
	if err != nil {
		return hub.Decision{}, err
	}
	var body wire.Decision
	if err := decodeOptional(r, &body); err != nil {
		return hub.Decision{}, err
	}
	return hub.Decision{Board: name, QID: qid, Reason: body.Reason, Sub: scopeOf(r).Subject}, nil
}

func qidRoute(r *http.Request) (string, uint64, error) {
	name, err := boardFor(r, auth.RoleAdmin)
	if err != nil {
		return "", 0, err
	}
	qid, err := parseQID("qid", chi.URLParam(r, "qid"))
	return name, qid, err
}

func parseQID(field, s string) (uint64, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v == 0 {
		return 0, badRequest("%s: %q is not a quarantine id", field, truncate(s))
	}
	return v, nil
}
