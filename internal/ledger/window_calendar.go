package ledger

import (
	"time"

	"github.com/rankwire/rankwire/internal/tzdb"
)

// calendar is how a board cuts time into day, week and month windows: by
// the local dates of its time zone (Settings.TimeZone), a week beginning
// on its first weekday (Settings.WeekStarts). A window starts at the first
// instant of its first local day, midnight where midnight exists; a day is
// 23 or 25 hours long across a daylight-saving change.
//
// Deterministic on every node: the zone comes from the database embedded
// in the binary (internal/tzdb), never from the host, and the arithmetic
// is on dates, never on durations.
type calendar struct {
	loc  *time.Location
	week time.Weekday // a week's first day
}

// utcCalendar is the default calendar: UTC, weeks from Monday (ISO).
var utcCalendar = calendar{loc: time.UTC, week: time.Monday}

// calendarOf returns the calendar of normalized settings s, whose zone
// loaded when they were normalized: a load failing here (never) falls back
// to UTC.
func calendarOf(s Settings) calendar {
	c := utcCalendar
	if loc, err := tzdb.Load(s.TimeZone); err == nil {
		c.loc = loc
	}
	if s.WeekStarts == "sunday" {
		c.week = time.Sunday
	}
	return c
}

// keyAt returns the key of the window of kind k holding time ms (unix ms).
func (c calendar) keyAt(k kind, ms int64) windowKey {
	if k == kindAll {
		return windowKey{kindAll, 0}
	}
	y, m, d := time.UnixMilli(ms).In(c.loc).Date()
	switch k {
	case kindWeek:
		back := (int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Weekday()) - int(c.week) + 7) % 7
		d -= back
	case kindMonth:
		d = 1
	}
	return windowKey{k, c.dayStart(y, m, d)}
}

// dayStart returns the first instant (unix ms) of the local date y-m-d
// (normalized as time.Date does): its midnight, or where the clocks
// skipped midnight (São Paulo's summer time began at 00:00 until 2018) the
// instant they jumped, the first one whose local date is y-m-d.
func (c calendar) dayStart(y int, m time.Month, d int) int64 {
	t := time.Date(y, m, d, 0, 0, 0, 0, c.loc)
	if localDate(t) < localDate(time.Date(y, m, d, 0, 0, 0, 0, time.UTC)) {
		// time.Date picked the offset before the gap: t is in the day
		// before, and the day begins where that offset ends.
		_, end := t.ZoneBounds()
		t = end
	}
	return t.UnixMilli()
}

// localDate returns t's calendar date as a comparable number, yyyymmdd.
func localDate(t time.Time) int {
	y, m, d := t.Date()
	return y*10000 + int(m)*100 + d
}

// back returns the key n windows before w (n < 0: after it); all stays all.
func (c calendar) back(w windowKey, n int) windowKey {
	if w.kind == kindAll {
		return w
	}
	y, m, d := time.UnixMilli(w.start).In(c.loc).Date()
	switch w.kind {
	case kindDay:
		d -= n
	case kindWeek:
		d -= 7 * n
	case kindMonth:
		m -= time.Month(n)
	}
	return windowKey{w.kind, c.dayStart(y, m, d)}
}

// name names a window's instance: "all", or its kind and the local date
// of its first day, "week:2026-01-05". Stable: a window's name never
// changes, and it is the date the board's operator sees on a calendar.
func (c calendar) name(k windowKey) string {
	if k.kind == kindAll {
		return k.kind.String()
	}
	return k.kind.String() + ":" + c.date(k)
}

// date returns the local date of a window's first day, YYYY-MM-DD: a
// history point's window.
func (c calendar) date(k windowKey) string {
	return time.UnixMilli(k.start).In(c.loc).Format(time.DateOnly)
}

// checkCalendar fails with ErrConflict, naming the field, where set moves
// the calendar of a board whose day, week or month windows hold entries:
// their starts and names were cut in the old calendar, and a window cut in
// the new one could take the name of an old one.
func (bs *boardState) checkCalendar(set Settings) error {
	field, from, to, changed := calendarChange(bs.settings, set)
	if !changed {
		return nil
	}
	for k, w := range bs.windows {
		if k.kind != kindAll && w.b.Len() > 0 {
			return errorf(ErrConflict, "%s: %q cannot become %q while the board's %s windows hold entries (create a new board)",
				field, from, to, k.kind)
		}
	}
	return nil
}

// recalendar moves bs to set's calendar, which checkCalendar allowed: it
// drops the day, week and month windows (all empty) cut in the old one and
// returns them, so that their watchers are told.
func (bs *boardState) recalendar(set Settings) []*window {
	if _, _, _, changed := calendarChange(bs.settings, set); !changed {
		return nil
	}
	var dropped []*window
	for _, k := range bs.sortedWindows() {
		if k.kind != kindAll {
			dropped = append(dropped, bs.windows[k])
			delete(bs.windows, k)
			bs.has[k.kind] = false
		}
	}
	bs.cal = calendarOf(set)
	return dropped
}

// DateAt returns the time (unix ms) a read of board at the local date
// date (YYYY-MM-DD, in the board's calendar) reads at: that day's noon
// there, inside its day, week and month whatever the zone (UTC's noon is
// the next day east of +12:00). An empty date returns at unchanged.
// ErrNotFound for an unknown board; ErrBadRequest, naming at, for a date
// that does not parse. O(1).
func (s *State) DateAt(board, date string, at int64) (int64, error) {
	if date == "" {
		return at, nil
	}
	bs, err := s.board(board)
	if err != nil {
		return 0, err
	}
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return 0, errorf(ErrBadRequest, "at: %q is not a date YYYY-MM-DD", Clip(date))
	}
	y, m, day := d.Date()
	return time.Date(y, m, day, 12, 0, 0, 0, bs.cal.loc).UnixMilli(), nil
}
