package ledger

import (
	"slices"
	"time"
	"unicode"
	"unicode/utf8"
)

// Tournaments: a board may open and close, and pay prizes to its final
// standings. Whether a submission is inside the board's time is decided by
// its acceptance time, which the event carries (event.At), so every node
// and every replay agrees; a board whose end has passed by that time takes
// no change of its entries from then on: submissions, removals and resets
// answer ErrConflict, and a merge of two members leaves its entries as
// they are. Its standings are final (Standings).

// Prize is one prize range of a board: ranks From..To (inclusive) win
// Prize, a label such as "€1,000".
type Prize struct {
	From  int    `json:"from"`
	To    int    `json:"to"`
	Prize string `json:"prize"`
}

// Limits of the tournament settings.
const (
	MaxPrizes    = 100     // prize ranges per board
	MaxPrizeRank = 1 << 20 // the last rank a range may reach
	MaxPrizeLen  = 128     // bytes of a prize label
)

// timeLayout is how normalized settings write starts_at and ends_at: UTC,
// milliseconds, so that equal times compare equal as strings.
const timeLayout = "2006-01-02T15:04:05.000Z"

// normalizeTournament checks and normalizes the tournament fields of s.
func (s *Settings) normalizeTournament() error {
	starts, err := normalizeTime("starts_at", &s.StartsAt)
	if err != nil {
		return err
	}
	ends, err := normalizeTime("ends_at", &s.EndsAt)
	if err != nil {
		return err
	}
	if s.StartsAt != "" && s.EndsAt != "" && ends <= starts {
		return errorf(ErrBadRequest, "ends_at: %s is not after starts_at %s", s.EndsAt, s.StartsAt)
	}
	return normalizePrizes(s.Prizes)
}

// normalizeTime parses *v (RFC 3339, empty: none) and rewrites it in
// timeLayout; it returns the time in unix ms.
func normalizeTime(field string, v *string) (int64, error) {
	if *v == "" {
		return 0, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *v)
	if err != nil || t.Year() < 2000 || t.Year() > 9999 {
		return 0, errorf(ErrBadRequest, "%s: %q is not an RFC 3339 time between the years 2000 and 9999", field, Clip(*v))
	}
	ms := t.UnixMilli()
	*v = time.UnixMilli(ms).UTC().Format(timeLayout)
	return ms, nil
}

// normalizePrizes checks prize ranges: within limits, labels printable,
// ranges not overlapping; it sorts them by From.
func normalizePrizes(ps []Prize) error {
	if len(ps) > MaxPrizes {
		return errorf(ErrBadRequest, "prizes: %d ranges, the most is %d", len(ps), MaxPrizes)
	}
	for i, p := range ps {
		switch {
		case p.From < 1 || p.From > MaxPrizeRank:
			return errorf(ErrBadRequest, "prizes[%d].from: %d is not in 1..%d", i, p.From, MaxPrizeRank)
		case p.To < p.From || p.To > MaxPrizeRank:
			return errorf(ErrBadRequest, "prizes[%d].to: %d is not in %d..%d", i, p.To, p.From, MaxPrizeRank)
		case p.Prize == "" || len(p.Prize) > MaxPrizeLen:
			return errorf(ErrBadRequest, "prizes[%d].prize: %d bytes, want 1..%d", i, len(p.Prize), MaxPrizeLen)
		case !utf8.ValidString(p.Prize) || hasControl(p.Prize):
			return errorf(ErrBadRequest, "prizes[%d].prize: invalid UTF-8 or a control character", i)
		}
	}
	slices.SortFunc(ps, func(a, b Prize) int { return a.From - b.From })
	for i := 1; i < len(ps); i++ {
		if ps[i].From <= ps[i-1].To {
			return errorf(ErrBadRequest, "prizes: ranks %d..%d overlap ranks %d..%d", ps[i].From, ps[i].To, ps[i-1].From, ps[i-1].To)
		}
	}
	return nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// prizeFor returns the prize of rank r, or "". O(log ranges).
func (s Settings) prizeFor(r int) string {
	i, found := slices.BinarySearchFunc(s.Prizes, r, func(p Prize, r int) int {
		switch {
		case p.To < r:
			return -1
		case p.From > r:
			return 1
		}
		return 0
	})
	if !found {
		return ""
	}
	return s.Prizes[i].Prize
}

// times returns the board's start and end in unix ms, 0 where unset.
// Normalized settings always parse.
func (s Settings) times() (starts, ends int64) {
	if t, err := time.Parse(timeLayout, s.StartsAt); err == nil {
		starts = t.UnixMilli()
	}
	if t, err := time.Parse(timeLayout, s.EndsAt); err == nil {
		ends = t.UnixMilli()
	}
	return starts, ends
}

// ended reports whether the board has ended at acceptance time at.
func (bs *boardState) ended(at int64) bool { return bs.ends != 0 && at >= bs.ends }

// checkOpen fails with ErrConflict, naming the time, where a submission
// accepted at at falls outside the board's time.
func (bs *boardState) checkOpen(at int64) error {
	switch {
	case bs.starts != 0 && at < bs.starts:
		return errorf(ErrConflict, "starts_at: submitted at %s, before the board starts at %s", FormatTime(at), bs.settings.StartsAt)
	case bs.ended(at):
		return errorf(ErrConflict, "ends_at: submitted at %s, after the board ended at %s", FormatTime(at), bs.settings.EndsAt)
	}
	return nil
}

// checkNotEnded fails with ErrConflict where the board has ended by at:
// what changes its entries is refused from then on.
func (bs *boardState) checkNotEnded(at int64, what string) error {
	if bs.ended(at) {
		return errorf(ErrConflict, "ends_at: the board ended at %s; %s would change its final standings", bs.settings.EndsAt, what)
	}
	return nil
}

// checkSettingsChange fails with ErrConflict where an ended board's
// times or prizes would change.
func (bs *boardState) checkSettingsChange(at int64, set Settings) error {
	if !bs.ended(at) {
		return nil
	}
	switch {
	case set.StartsAt != bs.settings.StartsAt || set.EndsAt != bs.settings.EndsAt:
		return errorf(ErrConflict, "ends_at: the board ended at %s; its starts_at and ends_at cannot change", bs.settings.EndsAt)
	case !slices.Equal(set.Prizes, bs.settings.Prizes):
		return errorf(ErrConflict, "prizes: the board ended at %s; its prizes cannot change", bs.settings.EndsAt)
	}
	return nil
}

// FormatTime writes unix ms as the gateway writes every time: RFC 3339 in
// UTC with milliseconds.
func FormatTime(ms int64) string { return time.UnixMilli(ms).UTC().Format(timeLayout) }

// MaxWriteTimeout is the longest the hub retries one write before it
// answers (its Config.WriteTimeout is capped at it).
const MaxWriteTimeout = time.Minute

// FinalAfter is how long after ends_at the standings are declared final:
// a write accepted just before the end may be retried for up to
// MaxWriteTimeout before it is stored, and is then applied; past this no
// accepted write can still arrive.
const FinalAfter = MaxWriteTimeout + 5*time.Second

// StandingRow is a row of the standings with its prize ("" where none).
// PrizeHeld: the member has a submission in quarantine, so the prize is
// reserved for them, not paid, until the quarantine is decided (it stays
// theirs: passing it down would pay someone a prize the member may still
// win back, and paying it would pay a possible cheat).
type StandingRow struct {
	Row
	Prize     string
	PrizeHeld bool
}

// Standings is a board's standings: its primary window (the window in
// which its end falls, once it ended) with prizes, less the members an
// admin disqualified (dispute.go).
type Standings struct {
	Final    bool   // the board ended at least FinalAfter ago: only an admin's amendment changes it
	Settled  bool   // an admin settled the board: the answer never changes again
	Revision int    // amendments applied (disqualifications, reinstatements)
	EndedAt  string // the board's ends_at where it has passed (normalized RFC 3339), else ""
	Seq      uint64
	Total    int
	Rows     []StandingRow
}

// Standings returns the first limit rows of board's standings at now
// (unix ms) from offset, each with its prize. ErrNotFound for an unknown
// board. Cost: O(log N + offset + rows) with disqualified members, else
// O(log N + rows). Read lock.
func (s *State) Standings(board string, now int64, offset, limit int) (Standings, error) {
	bs, err := s.board(board)
	if err != nil {
		return Standings{}, err
	}
	out := Standings{Settled: bs.disputes.settled, Revision: bs.disputes.revision}
	at := now
	if bs.ends != 0 && now >= bs.ends {
		out.EndedAt = bs.settings.EndsAt
		out.Final = now >= bs.ends+FinalAfter.Milliseconds()
		at = bs.ends - 1 // the window the end falls in
	}
	v := s.view(bs, bs.cal.keyAt(bs.settings.primaryKind(), at))
	var rows []Row
	out.Seq, out.Total, rows = bs.standingRows(v, offset, limit)
	out.Rows = make([]StandingRow, len(rows))
	for i, r := range rows {
		p := bs.settings.prizeFor(r.Rank)
		out.Rows[i] = StandingRow{Row: r, Prize: p, PrizeHeld: p != "" && r.Review}
	}
	return out, nil
}

// standingRows returns the window's seq, its total and rows offset+1 ..
// offset+limit of v with the disqualified members taken out: each row's
// rank drops by the disqualified members ranked above it. Without
// disqualifications it is v's page. O(D log N + limit + D) for D
// disqualified members.
func (bs *boardState) standingRows(v View, offset, limit int) (uint64, int, []Row) {
	d := &bs.disputes
	if len(d.disq) == 0 || v.w == nil {
		p := v.Page(offset, nil, limit)
		return p.Seq, p.Total, p.Rows
	}
	var ranks []int // the disqualified members' ranks in the window, ascending
	for h := range d.disq {
		if r, ok := v.w.b.Get(h); ok {
			ranks = append(ranks, r.Rank)
		}
	}
	slices.Sort(ranks)
	// The window's position of the standings' row offset+1: past every
	// disqualified member ranked at or before it.
	from := offset
	for _, r := range ranks {
		if r <= from+1 {
			from++
		}
	}
	p := v.Page(from, nil, limit+len(ranks))
	out := make([]Row, 0, limit)
	for _, r := range p.Rows {
		above, gone := slices.BinarySearch(ranks, r.Rank)
		if gone || len(out) == limit {
			continue
		}
		r.Rank -= above
		out = append(out, r)
	}
	return p.Seq, p.Total - len(ranks), out
}
