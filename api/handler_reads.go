package api

import (
	"math"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/rankwire/rankwire/hub"
)

type rowJSON struct {
	Rank     int     `json:"rank"`
	Member   string  `json:"member"`
	Score    float64 `json:"score"`
	Subscore float64 `json:"subscore"`
	Name     string  `json:"name,omitempty"` // the member's profile, where it has one
	Avatar   string  `json:"avatar,omitempty"`
	Country  string  `json:"country,omitempty"`
	Review   bool    `json:"review,omitempty"` // the member has a submission under review (quarantined)
}

func toRowJSON(r hub.Row) rowJSON {
	return rowJSON{Rank: r.Rank, Member: r.Member, Score: r.Score, Subscore: r.Subscore,
		Name: r.Profile.Name, Avatar: r.Profile.Avatar, Country: r.Profile.Country, Review: r.Review}
}

type pageJSON struct {
	Seq   uint64    `json:"seq"`
	Total int       `json:"total"`
	Count *int      `json:"count,omitempty"` // a score range's entries in all
	Rows  []rowJSON `json:"rows"`
	Next  string    `json:"next,omitempty"` // a cursor where more rows follow
}

// memberJSON is a single row with its board-window's seq and total; the
// member read adds top_percent. The row's fields sit inline, between total
// and top_percent.
type memberJSON struct {
	Seq   uint64 `json:"seq"`
	Total int    `json:"total"`
	rowJSON
	TopPercent *float64 `json:"top_percent,omitempty"`
}

func toPageJSON(p hub.Page) pageJSON {
	rows := make([]rowJSON, len(p.Rows))
	for i, r := range p.Rows {
		rows[i] = toRowJSON(r)
	}
	out := pageJSON{Seq: p.Seq, Total: p.Total, Rows: rows}
	if p.Next != nil {
		out.Next = p.Next.String()
	}
	return out
}

func toMemberJSON(p hub.Page, percent bool) memberJSON {
	r := p.Rows[0]
	m := memberJSON{Seq: p.Seq, Total: p.Total, rowJSON: toRowJSON(r)}
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
	after, err := cursorParam(r, "after")
	if err != nil {
		return err
	}
	if after != nil && r.URL.Query().Has("offset") {
		return badRequest("after: not with offset (a cursor is the position to read on from)")
	}
	p, err := s.hub.Top(l, offset, after, limit)
	return s.reply(w, toPageJSON(p), err)
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
	after, err := cursorParam(r, "after")
	if err != nil {
		return err
	}
	p, count, err := s.hub.ScoreRange(l, lo, hi, after, limit)
	if err != nil {
		return err
	}
	out := toPageJSON(p)
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
	return s.reply(w, toMemberJSON(p, true), nil)
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
	return s.reply(w, toPageJSON(p), err)
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
	return s.reply(w, toMemberJSON(p, false), nil)
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
	return s.reply(w, toPageJSON(p), err)
}

// reply writes v, or returns err for handle to write.
func (s *Server) reply(w http.ResponseWriter, v any, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// scoreRankJSON answers GET .../score-rank.
type scoreRankJSON struct {
	Rank  int `json:"rank"`
	Total int `json:"total"`
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
	return s.reply(w, scoreRankJSON{Rank: rank, Total: total}, err)
}

// historyJSON answers GET .../members/{member}/history.
type historyJSON struct {
	Member string      `json:"member"`
	Points []pointJSON `json:"points"`
}

// pointJSON is a past window's final standing (window) or one of the
// member's own changes (at).
type pointJSON struct {
	Window string  `json:"window,omitempty"`
	At     string  `json:"at,omitempty"`
	Rank   int     `json:"rank"`
	Score  float64 `json:"score"`
	Total  int     `json:"total"`
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
	out := historyJSON{Member: m, Points: make([]pointJSON, len(pts))}
	for i, p := range pts {
		out.Points[i] = pointJSON{Window: p.Window, Rank: p.Rank, Score: p.Score, Total: p.Total}
		if p.Window == "" {
			out.Points[i].At = hub.FormatTime(p.At)
		}
	}
	return s.reply(w, out, nil)
}
