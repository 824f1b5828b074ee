package ledger

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/tzdb"
)

func TestKeyAt(t *testing.T) {
	at := time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC) // a Wednesday
	cases := []struct {
		k    kind
		want time.Time
	}{
		{kindDay, time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)},
		{kindWeek, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)},
		{kindMonth, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		if got := utcCalendar.keyAt(c.k, at.UnixMilli()); got.start != c.want.UnixMilli() {
			t.Errorf("%v: %v, want %v", c.k, time.UnixMilli(got.start).UTC(), c.want)
		}
	}
	sunday := time.Date(2026, 3, 8, 23, 0, 0, 0, time.UTC)
	if utcCalendar.keyAt(kindWeek, sunday.UnixMilli()) != utcCalendar.keyAt(kindWeek, at.UnixMilli()) {
		t.Error("Sunday is not in the ISO week of the Wednesday before")
	}
}

// turnover is a local window boundary: the window of kind named before
// ends the millisecond before at (UTC), the one named after begins at it.
type turnover struct {
	window        string
	at            string // RFC 3339, UTC
	before, after string // window names
}

// TestLocalTurnovers submits through Apply (the event's time is the test
// clock) a millisecond before and at each local midnight across a
// daylight-saving change, and checks that the windows turn over there and
// nowhere else, with the local date as their name.
func TestLocalTurnovers(t *testing.T) {
	cases := []struct {
		zone, weekStarts string
		turns            []turnover
	}{
		{"Europe/Malta", "sunday", []turnover{
			// Summer time begins on the last Sunday of March: 02:00 CET → 03:00 CEST; that day has 23 hours.
			{"day", "2026-03-28T23:00:00Z", "day:2026-03-28", "day:2026-03-29"},
			{"day", "2026-03-29T22:00:00Z", "day:2026-03-29", "day:2026-03-30"},
			{"week", "2026-03-28T23:00:00Z", "week:2026-03-22", "week:2026-03-29"}, // weeks from Sunday
			{"month", "2026-03-31T22:00:00Z", "month:2026-03-01", "month:2026-04-01"},
			// It ends on the last Sunday of October: 03:00 CEST → 02:00 CET; that day has 25 hours.
			{"day", "2026-10-24T22:00:00Z", "day:2026-10-24", "day:2026-10-25"},
			{"day", "2026-10-25T23:00:00Z", "day:2026-10-25", "day:2026-10-26"},
			{"week", "2026-10-24T22:00:00Z", "week:2026-10-18", "week:2026-10-25"},
			{"week", "2026-10-31T23:00:00Z", "week:2026-10-25", "week:2026-11-01"},
		}},
		{"Pacific/Chatham", "monday", []turnover{
			// +12:45 → +13:45 on the last Sunday of September, at 02:45.
			{"day", "2026-09-26T11:15:00Z", "day:2026-09-26", "day:2026-09-27"},
			{"day", "2026-09-27T10:15:00Z", "day:2026-09-27", "day:2026-09-28"},
			{"week", "2026-09-27T10:15:00Z", "week:2026-09-21", "week:2026-09-28"},
			// +13:45 → +12:45 on the first Sunday of April, at 03:45.
			{"day", "2026-04-04T10:15:00Z", "day:2026-04-04", "day:2026-04-05"},
			{"day", "2026-04-05T11:15:00Z", "day:2026-04-05", "day:2026-04-06"},
			{"month", "2026-09-30T10:15:00Z", "month:2026-09-01", "month:2026-10-01"}, // in summer time now
		}},
		{"America/Sao_Paulo", "sunday", []turnover{
			// No summer time since 2019: midnight is 03:00 UTC all year.
			{"day", "2026-01-15T03:00:00Z", "day:2026-01-14", "day:2026-01-15"},
			{"day", "2026-07-15T03:00:00Z", "day:2026-07-14", "day:2026-07-15"},
			{"week", "2026-07-12T03:00:00Z", "week:2026-07-05", "week:2026-07-12"},
			// 2018: summer time began at midnight (00:00 → 01:00), so
			// 4 November began at 01:00 local, 03:00 UTC, and had 23 hours.
			{"day", "2018-11-04T03:00:00Z", "day:2018-11-03", "day:2018-11-04"},
			{"day", "2018-11-05T02:00:00Z", "day:2018-11-04", "day:2018-11-05"},
			{"week", "2018-11-04T03:00:00Z", "week:2018-10-28", "week:2018-11-04"},
			// It ended at midnight on 17 February 2019 (00:00 → 23:00 the day before): 25 hours.
			{"day", "2019-02-16T02:00:00Z", "day:2019-02-15", "day:2019-02-16"},
			{"day", "2019-02-17T03:00:00Z", "day:2019-02-16", "day:2019-02-17"},
		}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.zone, "/", "_"), func(t *testing.T) {
			set := Settings{Windows: []string{"day", "week", "month"}, Retention: 100, TimeZone: c.zone, WeekStarts: c.weekStarts}
			for _, turn := range c.turns {
				checkTurnover(t, set, turn)
			}
		})
	}
}

// checkTurnover submits to a new board of set at turn.at-1ms and at
// turn.at and checks the two submissions' windows.
func checkTurnover(t *testing.T, set Settings, turn turnover) {
	t.Helper()
	at, err := time.Parse(time.RFC3339, turn.at)
	if err != nil {
		t.Fatal(err)
	}
	s := New()
	mustApply(t, s, &Event{Kind: EvSettings, Board: "b", Settings: mustNormalize(t, set)})
	ms := at.UnixMilli()
	for i, when := range []int64{ms - 1, ms} {
		mustApply(t, s, &Event{Kind: EvGroup, At: when, Groups: []Group{{Board: "b", Items: []Item{{Member: []string{"before", "after"}[i], Score: 1}}}}})
	}
	for i, want := range []string{turn.before, turn.after} {
		w, err := s.FeedWindow("b", turn.window, ms-1+int64(i))
		if err != nil {
			t.Fatal(err)
		}
		if w.Key() != want {
			t.Errorf("%s at %s%s: window %s, want %s", turn.window, turn.at, []string{" - 1 ms", ""}[i], w.Key(), want)
			continue
		}
		if n := w.Seq(); n != 1 {
			t.Errorf("%s: %d changes, want the one submission made in it", want, n)
		}
	}
}

// TestCalendarBack checks that stepping windows back and forth crosses
// days of 23 and 25 hours to local midnights.
func TestCalendarBack(t *testing.T) {
	loc, err := tzdb.Load("Europe/Malta")
	if err != nil {
		t.Fatal(err)
	}
	c := calendar{loc: loc, week: time.Monday}
	day := c.keyAt(kindDay, time.Date(2026, 3, 30, 12, 0, 0, 0, loc).UnixMilli())
	for n, want := range map[int]string{1: "day:2026-03-29", 2: "day:2026-03-28", -1: "day:2026-03-31", 0: "day:2026-03-30"} {
		got := c.back(day, n)
		if c.name(got) != want {
			t.Errorf("back(%d) = %s, want %s", n, c.name(got), want)
		}
		if h, m, _ := time.UnixMilli(got.start).In(loc).Clock(); h != 0 || m != 0 {
			t.Errorf("back(%d) starts at %02d:%02d local, not midnight", n, h, m)
		}
	}
	month := c.keyAt(kindMonth, day.start)
	if got := c.name(c.back(month, 3)); got != "month:2025-12-01" {
		t.Errorf("3 months before March: %s", got)
	}
}

func TestCalendarSettings(t *testing.T) {
	bad := []struct {
		set   Settings
		field string
	}{
		{Settings{TimeZone: "Mars/Olympus"}, "time_zone:"},
		{Settings{TimeZone: "Local"}, "time_zone:"}, // the host's zone would differ between nodes
		{Settings{TimeZone: "europe/malta"}, "time_zone:"},
		{Settings{TimeZone: strings.Repeat("A", 300)}, "time_zone:"},
		{Settings{WeekStarts: "saturday"}, "week_starts:"},
	}
	for _, c := range bad {
		_, err := c.set.normalize()
		if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%+v: %v, want ErrBadRequest naming %s", c.set, err, c.field)
		}
	}
	n, err := Settings{}.normalize()
	if err != nil || n.TimeZone != "UTC" || n.WeekStarts != "monday" {
		t.Errorf("defaults: %q %q %v", n.TimeZone, n.WeekStarts, err)
	}
}

// TestCalendarChange: the calendar moves freely while the day, week and
// month windows are empty, and never once they hold entries.
func TestCalendarChange(t *testing.T) {
	s := New()
	set := Settings{Windows: []string{"all", "day"}}
	mustApply(t, s, &Event{Kind: EvSettings, Board: "b", Settings: mustNormalize(t, set)})
	set.TimeZone = "Europe/Malta"
	mustApply(t, s, &Event{Kind: EvSettings, Board: "b", Settings: mustNormalize(t, set)})
	at := time.Date(2026, 3, 28, 23, 30, 0, 0, time.UTC) // 00:30 on 29 March in Malta
	mustApply(t, s, &Event{Kind: EvGroup, At: at.UnixMilli(), Groups: []Group{{Board: "b", Items: []Item{{Member: "m", Score: 1}}}}})
	if w, _ := s.FeedWindow("b", "day", at.UnixMilli()); w.Key() != "day:2026-03-29" {
		t.Errorf("window %s, want Malta's date", w.Key())
	}
	set.TimeZone = "UTC"
	out := s.Apply(4, &Event{Kind: EvSettings, Board: "b", Settings: mustNormalize(t, set)})
	if !errors.Is(out.Err, ErrConflict) || !strings.Contains(out.Err.Error(), "time_zone:") {
		t.Errorf("moving a calendar with entries: %v, want ErrConflict naming time_zone", out.Err)
	}
}

// TestDateAt: a read's at is a date of the board's calendar, even where
// UTC's noon of that date is the next day there (east of +12:00).
func TestDateAt(t *testing.T) {
	s := New()
	set := Settings{Windows: []string{"day", "week"}, TimeZone: "Pacific/Chatham", WeekStarts: "sunday"}
	mustApply(t, s, &Event{Kind: EvSettings, Board: "b", Settings: mustNormalize(t, set)})
	for date, want := range map[string][2]string{
		"2026-09-27": {"day:2026-09-27", "week:2026-09-27"}, // summer time began that night
		"2026-09-26": {"day:2026-09-26", "week:2026-09-20"},
		"2026-01-15": {"day:2026-01-15", "week:2026-01-11"},
	} {
		ms, err := s.DateAt("b", date, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, kind := range []string{"day", "week"} {
			if w, _ := s.FeedWindow("b", kind, ms); w.Key() != want[i] {
				t.Errorf("at=%s: %s, want %s", date, w.Key(), want[i])
			}
		}
	}
	if _, err := s.DateAt("b", "2026-13-01", 0); !errors.Is(err, ErrBadRequest) {
		t.Errorf("a bad date: %v", err)
	}
	if _, err := s.DateAt("gone", "2026-01-01", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown board: %v", err)
	}
}
