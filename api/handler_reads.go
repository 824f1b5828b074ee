package api

import (
	"math"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/wire"
)

// rowJSON is a row as the protocol shows it: the WebSocket tests
// (ws_helpers_test.go, ws_test.go) still name it so, until the live plane
// moves out of api and takes up wire's types.
type rowJSON = wire.Row

// toRow is r as the protocol shows it.
func toRow(r hub.Row) wire.Row {
	return wire.Row{Rank: r.Rank, Member: r.Member, Score: r.Score, Subscore: r.Subscore,
		Name: r.Profile.Name, Avatar: r.Profile.Avatar, Country: r.Profile.Country, Review: r.Review}
}

// toPage is p as the protocol shows it, its next cursor sealed for l;
// Count is left for the score-range read to set.
func (s *Server) toPage(l hub.Loc, p hub.Page) wire.Page {
	rows := make([]wire.Row, len(p.Rows))
	for i, r := range p.Rows {
		rows[i] = toRow(r)
	}
	out := wire.Page{Seq: p.Seq, Total: p.Total, Rows: rows}
	if p.Next != nil {
		out.Next = s.cursors.seal(l, *p.Next)
	}
	return out
}

// toMemberRow is p's first row with p's seq and total; the member read
// (percent) adds top_percent.
func toMemberRow(p hub.Page, percent bool) wire.MemberRow {
	r := p.Rows[0]
	m := wire.MemberRow{Seq: p.Seq, Total: p.Total, Row: toRow(r)}
	if percent && p.Total > 0 {
		pct := 100 * float64(r.Rank) / float64(p.Total)
		m.TopPercent = &pct
	}
	return m
}

func (s *Server) top(w http.ResponseWriter, r *http.Request) error {
	l, err := locFor(r)
	if err != nil {
		return err
	}
	limit, err := intParam(r, "limit", 10, 1, MaxLimit)
	if err != nil {
		return err
	}
	offset, err := intParam(r, "offset", 0, 0, maxOffset)
	if err != nil {
		return err
	}
	after, err := s.cursorParam(r, l, "after")
	if err != nil {
		return err
	}
	if after != nil && r.URL.Query().Has("offset") {
		return badRequest("after: not with offset (a cursor is the position to read on from)")
	}
	p, err := s.hub.Top(l, offset, after, limit)
	return s.reply(w, s.toPage(l, p), err)
}

// scores answers GET .../scores?min=&max=: the rows whose score lies in
// [min, max] in rank order, with their count, a page at a time.
func (s *Server) scores(w http.ResponseWriter, r *http.Request) error {
	l, err := locFor(r)
	if err != nil {
		return err
	}
	lo, err := floatParam(r, "min", math.Inf(-1), false)
	if err != nil {
		return err
	}
	hi, err := floatParam(r, "max", math.Inf(1), false)
	if err != nil {
		return err
	}
	if lo > hi {
		return badRequest("min: %v is above max %v", lo, hi)
	}
	limit, err := intParam(r, "limit", 10, 1, MaxLimit)
	if err != nil {
		return err
	}
	after, err := s.cursorParam(r, l, "after")
	if err != nil {
		return err
	}
	p, count, err := s.hub.ScoreRange(l, lo, hi, after, limit)
	if err != nil {
		return err
	}
	out := s.toPage(l, p)
	out.Count = &count
	return s.reply(w, out, nil)
}

// memberLoc returns the board-window and the {member} of a member read.
func memberLoc(r *http.Request) (hub.Loc, string, error) {
	l, err := locFor(r)
	if err != nil {
		return l, "", err
	}
	m, err := memberParam(r, "member")
	return l, m, err
}

func (s *Server) member(w http.ResponseWriter, r *http.Request) error {
	l, m, err := memberLoc(r)
	if err != nil {
		return err
	}
	p, err := s.hub.Member(l, m)
	if err != nil {
		return err
	}
	return s.reply(w, toMemberRow(p, true), nil)
}

func (s *Server) around(w http.ResponseWriter, r *http.Request) error {
	l, m, err := memberLoc(r)
	if err != nil {
		return err
	}
	radius, err := intParam(r, "radius", 5, 0, MaxRadius)
	if err != nil {
		return err
	}
	p, err := s.hub.Around(l, m, radius)
	return s.reply(w, s.toPage(l, p), err)
}

func (s *Server) atRank(w http.ResponseWriter, r *http.Request) error {
	l, err := locFor(r)
	if err != nil {
		return err
	}
	rank, err := parseBounded("rank", chi.URLParam(r, "rank"), 1, maxRankArg)
	if err != nil {
		return err
	}
	p, err := s.hub.AtRank(l, rank)
	if err != nil {
		return err
	}
	return s.reply(w, toMemberRow(p, false), nil)
}

func (s *Server) members(w http.ResponseWriter, r *http.Request) error {
	l, err := locFor(r)
	if err != nil {
		return err
	}
	ids, err := idsParam(r)
	if err != nil {
		return err
	}
	p, err := s.hub.Members(l, ids)
	return s.reply(w, s.toPage(l, p), err)
}

// reply writes v, or returns err for handle to write.
func (s *Server) reply(w http.ResponseWriter, v any, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// scoreRank answers the rank a new entry with ?score= (required) and
// ?subscore= (default 0) would take now.
func (s *Server) scoreRank(w http.ResponseWriter, r *http.Request) error {
	l, err := locFor(r)
	if err != nil {
		return err
	}
	score, err := floatParam(r, "score", 0, true)
	if err != nil {
		return err
	}
	sub, err := floatParam(r, "subscore", 0, false)
	if err != nil {
		return err
	}
	rank, total, err := s.hub.ScoreRank(l, score, sub)
	return s.reply(w, wire.ScoreRank{Rank: rank, Total: total}, err)
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	l, m, err := memberLoc(r)
	if err != nil {
		return err
	}
	if r.URL.Query().Has("at") {
		return badRequest("at: history reads the retained windows as they stand; leave it out")
	}
	pts, err := s.hub.History(l, m)
	if err != nil {
		return err
	}
	out := wire.History{Member: m, Points: make([]wire.HistoryPoint, len(pts))}
	for i, p := range pts {
		out.Points[i] = wire.HistoryPoint{Window: p.Window, Rank: p.Rank, Score: p.Score, Total: p.Total}
		if p.Window == "" {
			out.Points[i].At = hub.FormatTime(p.At)
		}
	}
	return s.reply(w, out, nil)
}
