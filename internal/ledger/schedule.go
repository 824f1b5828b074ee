package ledger

import (
	"strconv"
	"strings"
	"time"

	"github.com/rankwire/rankwire/internal/names"
	"github.com/rankwire/rankwire/internal/tzdb"
)

// Schedules: a tenant may have the gateway create a tournament board for
// each occurrence of a recurrence (every day, week or month at a local
// time in an IANA time zone), from a template of board settings. This file
// is the schedule's shape and its pure recurrence arithmetic; the state
// and its events are in schedule_state.go.
//
// Local time: an occurrence starts at the wall-clock time At of its local
// day. Where that wall-clock time does not exist (the hour a spring
// daylight-saving change skips) the start is the same span after the
// change (02:30 becomes 03:30 where 02:00 jumps to 03:00); where it exists
// twice (the hour an autumn change repeats) the start is the first of the
// two. The rule depends only on the time-zone database embedded in the
// binary (internal/tzdb), never the host's.

// Schedule is what PUT /v1/schedules/{name} carries: a recurrence, a
// duration and a template of board settings. Empty fields take the
// defaults normalize names.
type Schedule struct {
	Every       string   `json:"every"`             // "day", "week" or "month"
	Weekday     string   `json:"weekday,omitempty"` // every week: "monday" … "sunday"
	Day         int      `json:"day,omitempty"`     // every month: the day of the month, 1..MaxScheduleDay
	At          string   `json:"at"`                // the local start time, "HH:MM"
	TimeZone    string   `json:"time_zone"`         // an IANA name; "" means UTC
	Duration    string   `json:"duration"`          // how long each board runs: a Go duration
	CreateAhead string   `json:"create_ahead"`      // how long before its start a board is created; "" means 1h
	Paused      bool     `json:"paused"`            // create no board while set
	Settings    Settings `json:"settings"`          // each board's settings; starts_at and ends_at are the occurrence's
}

// Limits of a schedule.
const (
	MaxScheduleDay       = 28 // a day every month has
	MinScheduleDuration  = time.Minute
	MaxScheduleDuration  = 31 * 24 * time.Hour
	DefaultScheduleAhead = time.Hour
	MaxScheduleAhead     = 7 * 24 * time.Hour
	MaxScheduleNameLen   = names.MaxLen - len("-YYYYMMDD-HHMM") // its boards' names must be names too
)

var weekdays = [...]string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}

// ValidScheduleName reports whether name may name a schedule: a board
// name short enough that its boards' names (BoardName) are board names.
func ValidScheduleName(name string) bool {
	return names.Valid(name) && len(name) <= MaxScheduleNameLen
}

// Normalize validates sc and fills in the defaults, so that equal
// schedules compare equal. The error wraps ErrBadRequest and names the
// field by its JSON path.
func (sc Schedule) Normalize() (Schedule, error) {
	rec, err := sc.recurrence()
	if err != nil {
		return sc, err
	}
	sc.Duration = (time.Duration(rec.duration) * time.Millisecond).String()
	sc.CreateAhead = (time.Duration(rec.ahead) * time.Millisecond).String()
	if sc.TimeZone == "" {
		sc.TimeZone = "UTC"
	}
	if sc.Settings.TimeZone == "" { // its boards' windows turn over at the schedule's midnight
		sc.Settings.TimeZone = sc.TimeZone
	}
	if sc.Settings.StartsAt != "" || sc.Settings.EndsAt != "" {
		return sc, errorf(ErrBadRequest, "settings.starts_at, settings.ends_at: set by the schedule for each board; leave them out")
	}
	set, err := sc.Settings.normalize()
	if err != nil {
		return sc, prefixField("settings.", err)
	}
	sc.Settings = set
	return sc, nil
}

// prefixField puts prefix before the field a ledger error names.
func prefixField(prefix string, err error) error {
	if e, ok := err.(*Error); ok {
		c := *e
		c.Msg = prefix + c.Msg
		return &c
	}
	return err
}

// recurrence is a schedule's parsed recurrence.
type recurrence struct {
	every    kind // kindDay, kindWeek or kindMonth
	weekday  time.Weekday
	day      int
	hh, mm   int
	loc      *time.Location
	duration int64 // ms
	ahead    int64 // ms
}

// recurrence parses and checks sc's recurrence fields. The error wraps
// ErrBadRequest and names the field.
func (sc Schedule) recurrence() (rec recurrence, err error) {
	if rec.every, err = parseEvery(sc); err != nil {
		return rec, err
	}
	if rec.hh, rec.mm, err = parseClock(sc.At); err != nil {
		return rec, err
	}
	if rec.loc, err = LoadZone(sc.TimeZone); err != nil {
		return rec, errorf(ErrBadRequest, "time_zone: %q is not an IANA time zone", Clip(sc.TimeZone))
	}
	d, err := parseSpan("duration", sc.Duration, "", MinScheduleDuration, MaxScheduleDuration)
	if err != nil {
		return rec, err
	}
	a, err := parseSpan("create_ahead", sc.CreateAhead, DefaultScheduleAhead.String(), 0, MaxScheduleAhead)
	if err != nil {
		return rec, err
	}
	rec.duration, rec.ahead = d.Milliseconds(), a.Milliseconds()
	rec.weekday, rec.day = weekdayOf(sc.Weekday), sc.Day
	return rec, nil
}

// parseEvery checks every with its weekday or day.
func parseEvery(sc Schedule) (kind, error) {
	switch sc.Every {
	case "day":
		if sc.Weekday != "" || sc.Day != 0 {
			return 0, errorf(ErrBadRequest, "weekday, day: a daily schedule takes neither")
		}
		return kindDay, nil
	case "week":
		if weekdayOf(sc.Weekday) < 0 {
			return 0, errorf(ErrBadRequest, "weekday: %q is not one of monday … sunday", Clip(sc.Weekday))
		}
		if sc.Day != 0 {
			return 0, errorf(ErrBadRequest, "day: a weekly schedule takes a weekday, not a day")
		}
		return kindWeek, nil
	case "month":
		if sc.Day < 1 || sc.Day > MaxScheduleDay {
			return 0, errorf(ErrBadRequest, "day: %d is not in 1..%d", sc.Day, MaxScheduleDay)
		}
		if sc.Weekday != "" {
			return 0, errorf(ErrBadRequest, "weekday: a monthly schedule takes a day, not a weekday")
		}
		return kindMonth, nil
	}
	return 0, errorf(ErrBadRequest, "every: %q is not one of day, week, month", Clip(sc.Every))
}

func weekdayOf(s string) time.Weekday {
	for i, w := range weekdays {
		if w == s {
			return time.Weekday(i)
		}
	}
	return -1
}

// parseClock parses "HH:MM" (00:00 to 23:59).
func parseClock(s string) (hh, mm int, err error) {
	h, m, ok := strings.Cut(s, ":")
	if ok && len(h) == 2 && len(m) == 2 && isDigits(h+m) {
		hh, err1 := strconv.Atoi(h)
		mm, err2 := strconv.Atoi(m)
		if err1 == nil && err2 == nil && hh >= 0 && hh < 24 && mm >= 0 && mm < 60 {
			return hh, mm, nil
		}
	}
	return 0, 0, errorf(ErrBadRequest, "at: %q is not a local time HH:MM", Clip(s))
}

func isDigits(s string) bool {
	return strings.Trim(s, "0123456789") == ""
}

// parseSpan parses a Go duration in lo..hi; def stands for "" (none: required).
func parseSpan(field, s, def string, lo, hi time.Duration) (time.Duration, error) {
	if s == "" {
		s = def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < lo || d > hi {
		return 0, errorf(ErrBadRequest, "%s: %q is not a duration between %s and %s (such as \"1h30m\")", field, Clip(s), lo, hi)
	}
	return d, nil
}

// LoadZone returns the IANA time zone name ("" is UTC) from the database
// embedded in the binary (internal/tzdb), never the host's.
func LoadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	return tzdb.Load(name)
}

// matches reports whether the local date y-m-d is a day of the recurrence.
func (rec *recurrence) matches(t time.Time) bool {
	switch rec.every {
	case kindWeek:
		return t.Weekday() == rec.weekday
	case kindMonth:
		return t.Day() == rec.day
	}
	return true
}

// next returns the start (unix ms) of the first occurrence that starts
// strictly after after (unix ms). It walks local days from the day before
// after's: at most 63 days for a monthly recurrence. Pure.
func (rec *recurrence) next(after int64) int64 {
	t := time.UnixMilli(after).In(rec.loc)
	day := time.Date(t.Year(), t.Month(), t.Day(), 12, 0, 0, 0, time.UTC).AddDate(0, 0, -1)
	for i := 0; i < 64; i++ {
		if rec.matches(day) {
			if start := localAt(day.Year(), day.Month(), day.Day(), rec.hh, rec.mm, rec.loc); start > after {
				return start
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	return 0 // unreachable: every recurrence has a day in any 63
}

// localAt returns the instant (unix ms) of the wall-clock time hh:mm of
// the local date y-m-d in loc, by the rule in the file comment: a skipped
// time is moved forward by the gap, a repeated time is the earlier one.
func localAt(y int, m time.Month, d, hh, mm int, loc *time.Location) int64 {
	wall := time.Date(y, m, d, hh, mm, 0, 0, time.UTC).Unix() // the wall clock read as UTC
	_, before := time.Unix(wall-36*3600, 0).In(loc).Zone()    // the offsets a day and a half either side
	_, after := time.Unix(wall+36*3600, 0).In(loc).Zone()
	best, found := wall-int64(before), false // skipped: read with the offset before the change
	for _, off := range []int{before, after} {
		u := wall - int64(off)
		if l := time.Unix(u, 0).In(loc); l.Hour() == hh && l.Minute() == mm && l.Day() == d && (!found || u < best) {
			best, found = u, true
		}
	}
	return best * 1000
}

// BoardName returns the name of the board a schedule creates for the
// occurrence starting at start (unix ms): "<schedule>-<YYYYMMDD>-<HHMM>",
// the local date and start time in the schedule's time zone.
func BoardName(schedule string, start int64, loc *time.Location) string {
	return schedule + "-" + time.UnixMilli(start).In(loc).Format("20060102-1504")
}
