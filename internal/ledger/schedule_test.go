package ledger

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func utc(t *testing.T, s string) int64 {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm.UnixMilli()
}

func mustRec(t *testing.T, sc Schedule) recurrence {
	t.Helper()
	n, err := sc.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := n.recurrence()
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestRecurrenceMaltaDST: occurrences in Europe/Malta keep their local
// time across both daylight-saving changes of 2026 (29 March, 25 October);
// a skipped time moves forward by the gap, a repeated one is the first.
func TestRecurrenceMaltaDST(t *testing.T) {
	cases := []struct {
		name      string
		sc        Schedule
		after     string
		want      []string // successive starts, UTC
		wantBoard string   // the first start's board name
	}{
		{"daily 20:00 across spring", Schedule{Every: "day", At: "20:00", TimeZone: "Europe/Malta", Duration: "1h"},
			"2026-03-27T12:00:00Z", []string{"2026-03-27T19:00:00Z", "2026-03-28T19:00:00Z", "2026-03-29T18:00:00Z", "2026-03-30T18:00:00Z"}, "s-20260327-2000"},
		{"daily 20:00 across autumn", Schedule{Every: "day", At: "20:00", TimeZone: "Europe/Malta", Duration: "1h"},
			"2026-10-24T12:00:00Z", []string{"2026-10-24T18:00:00Z", "2026-10-25T19:00:00Z"}, "s-20261024-2000"},
		{"02:30 skipped in spring", Schedule{Every: "day", At: "02:30", TimeZone: "Europe/Malta", Duration: "1h"},
			"2026-03-28T12:00:00Z", []string{"2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"}, "s-20260329-0330"},
		{"02:30 repeated in autumn", Schedule{Every: "day", At: "02:30", TimeZone: "Europe/Malta", Duration: "1h"},
			"2026-10-24T12:00:00Z", []string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}, "s-20261025-0230"},
		{"weekly sunday", Schedule{Every: "week", Weekday: "sunday", At: "21:15", TimeZone: "Europe/Malta", Duration: "2h"},
			"2026-03-22T20:15:00Z", []string{"2026-03-22T20:15:01Z", "2026-03-29T19:15:00Z", "2026-04-05T19:15:00Z"}, "s-20260322-2115"},
		{"monthly 28th UTC", Schedule{Every: "month", Day: 28, At: "00:00", Duration: "24h"},
			"2026-01-28T00:00:00Z", []string{"2026-02-28T00:00:00Z", "2026-03-28T00:00:00Z"}, "s-20260228-0000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := mustRec(t, c.sc)
			after := utc(t, c.after)
			if c.name == "weekly sunday" { // the occurrence at after itself is not after it
				c.want = c.want[1:]
			}
			for i, w := range c.want {
				got := rec.next(after)
				if got != utc(t, w) {
					t.Fatalf("occurrence %d after %s: %s, want %s", i, FormatTime(after), FormatTime(got), w)
				}
				if i == 0 && c.name != "weekly sunday" {
					if name := BoardName("s", got, rec.loc); name != c.wantBoard {
						t.Errorf("board name %q, want %q", name, c.wantBoard)
					}
				}
				after = got
			}
		})
	}
}

func TestScheduleNormalizeErrors(t *testing.T) {
	ok := Schedule{Every: "day", At: "20:00", TimeZone: "Europe/Malta", Duration: "1h"}
	for _, c := range []struct {
		field string
		edit  func(*Schedule)
	}{
		{"every", func(s *Schedule) { s.Every = "hour" }},
		{"weekday", func(s *Schedule) { s.Every, s.Weekday = "week", "funday" }},
		{"day", func(s *Schedule) { s.Every, s.Day = "month", 29 }},
		{"weekday, day", func(s *Schedule) { s.Day = 3 }},
		{"at", func(s *Schedule) { s.At = "24:00" }},
		{"at", func(s *Schedule) { s.At = "8:00" }},
		{"at", func(s *Schedule) { s.At = "+1:00" }},
		{"time_zone", func(s *Schedule) { s.TimeZone = "Mars/Olympus" }},
		{"time_zone", func(s *Schedule) { s.TimeZone = "../../etc/passwd" }},
		{"duration", func(s *Schedule) { s.Duration = "" }},
		{"duration", func(s *Schedule) { s.Duration = "30s" }},
		{"create_ahead", func(s *Schedule) { s.CreateAhead = "8d" }},
		{"create_ahead", func(s *Schedule) { s.CreateAhead = "-1m" }},
		{"settings.starts_at", func(s *Schedule) { s.Settings.StartsAt = "2026-01-01T00:00:00Z" }},
		{"settings.prizes[0].from", func(s *Schedule) { s.Settings.Prizes = []Prize{{From: 0, To: 1, Prize: "x"}} }},
	} {
		sc := ok
		c.edit(&sc)
		_, err := sc.Normalize()
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrBadRequest) || !strings.HasPrefix(e.Msg, c.field+":") && !strings.HasPrefix(e.Msg, c.field+",") {
			t.Errorf("%s: %v", c.field, err)
		}
	}
	n, err := ok.Normalize()
	if err != nil || n.CreateAhead != "1h0m0s" || n.Duration != "1h0m0s" || n.Settings.Policy != "best" || n.Settings.TimeZone != "Europe/Malta" {
		t.Fatalf("defaults: %+v, %v", n, err)
	}
	if ValidScheduleName(strings.Repeat("a", MaxScheduleNameLen+1)) || !ValidScheduleName(strings.Repeat("a", MaxScheduleNameLen)) {
		t.Error("schedule names: the longest is not MaxScheduleNameLen")
	}
}

// scheduleScene is a tenant with a daily Malta schedule "cup", created at
// created, 20:00–21:00 local, two prizes, created 1 h ahead.
func scheduleScene(t *testing.T, created int64) *State {
	t.Helper()
	st := New()
	sc := &Schedule{Every: "day", At: "20:00", TimeZone: "Europe/Malta", Duration: "1h",
		Settings: Settings{Prizes: []Prize{{From: 1, To: 1, Prize: "€100"}}}}
	mustApply(t, st, &Event{Kind: EvSchedule, At: created, Name: "cup", Schedule: sc, MaxSchedules: 2})
	return st
}

func fire(st *State, f Firing, at int64) error {
	if f.Board == "" {
		f.Board = BoardName(f.Schedule, f.Start, maltaZone)
	}
	return st.Apply(st.Seq()+1, &Event{Kind: EvFire, At: at, Name: f.Schedule, Occ: f.Start, Board: f.Board, MaxBoards: 10}).Err
}

var maltaZone, _ = LoadZone("Europe/Malta")

// TestScheduleFiresOnce: an occurrence is due from create_ahead before its
// start; its EvFire creates the board once, with the occurrence's times;
// a second EvFire of it, an early one and a forged one change nothing.
func TestScheduleFiresOnce(t *testing.T) {
	st := scheduleScene(t, utc(t, "2026-03-28T12:00:00Z"))
	start := utc(t, "2026-03-28T19:00:00Z")
	if due := st.Due(start - time.Hour.Milliseconds() - 1); len(due) != 0 {
		t.Fatalf("due before create_ahead: %v", due)
	}
	early := Firing{Schedule: "cup", Start: start, Board: "cup-20260328-2000"}
	if err := fire(st, early, start-time.Hour.Milliseconds()-1); !errors.Is(err, ErrConflict) {
		t.Fatalf("an early fire: %v", err)
	}
	if err := fire(st, Firing{Schedule: "cup", Start: start - 24*time.Hour.Milliseconds()}, start); !errors.Is(err, ErrConflict) {
		t.Fatalf("an occurrence before the schedule: %v", err)
	}
	if err := fire(st, Firing{Schedule: "cup", Start: start, Board: "other-20260328-2000"}, start); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("another schedule's board name: %v", err)
	}
	now := start - 30*60_000
	due := st.Due(now)
	if len(due) != 1 || due[0] != early {
		t.Fatalf("due: %v", due)
	}
	if err := fire(st, due[0], now); err != nil {
		t.Fatal(err)
	}
	info, err := st.BoardInfo("cup-20260328-2000", now)
	if err != nil || info.Settings.StartsAt != "2026-03-28T19:00:00.000Z" || info.Settings.EndsAt != "2026-03-28T20:00:00.000Z" ||
		len(info.Settings.Prizes) != 1 {
		t.Fatalf("board: %+v, %v", info.Settings, err)
	}
	if err := fire(st, due[0], now+1); !errors.Is(err, ErrConflict) {
		t.Fatalf("a second fire: %v", err)
	}
	if due := st.Due(now + 1); len(due) != 0 {
		t.Fatalf("due after firing: %v", due)
	}
	// The next day's, across the change to summer time: 18:00 UTC.
	next := utc(t, "2026-03-29T18:00:00Z")
	if due := st.Due(next - 60_000); len(due) != 1 || due[0].Start != next {
		t.Fatalf("next day: %v", due)
	}
	sc, _ := st.ScheduleOf("cup", now)
	if sc.LastBoard != "cup-20260328-2000" || sc.Next != next || sc.Last != start {
		t.Fatalf("info: %+v", sc)
	}
}

// TestSchedulePauseDeleteLimit: a paused schedule is never due, a resume
// fires nothing that started while paused, a delete keeps the boards, a
// taken name and the board limit consume the occurrence with the reason,
// and the schedule limit refuses one more.
func TestSchedulePauseDeleteLimit(t *testing.T) {
	t0 := utc(t, "2026-03-28T12:00:00Z")
	st := scheduleScene(t, t0)
	start := utc(t, "2026-03-28T19:00:00Z")
	put := func(at int64, paused bool) {
		sc := &Schedule{Every: "day", At: "20:00", TimeZone: "Europe/Malta", Duration: "1h", Paused: paused}
		mustApply(t, st, &Event{Kind: EvSchedule, At: at, Name: "cup", Schedule: sc})
	}
	put(t0+1, true)
	if due := st.Due(start); len(due) != 0 {
		t.Fatalf("paused, due: %v", due)
	}
	put(start+60_000, false) // resumed a minute into the occurrence
	next := utc(t, "2026-03-29T18:00:00Z")
	if due := st.Due(start + 120_000); len(due) != 0 {
		t.Fatalf("resumed: %v", due)
	}
	if sc, _ := st.ScheduleOf("cup", start+120_000); sc.Next != next {
		t.Fatalf("resumed: next %s", FormatTime(sc.Next))
	}
	// The next occurrence's board name is taken: consumed, with the reason.
	mustApply(t, st, &Event{Kind: EvSettings, Board: "cup-20260329-2000", Settings: &Settings{}})
	if err := fire(st, Firing{Schedule: "cup", Start: next}, next); err != nil {
		t.Fatal(err)
	}
	if sc, _ := st.ScheduleOf("cup", next); sc.LastBoard != "" || !strings.Contains(sc.LastError, "exists already") || sc.Last != next {
		t.Fatalf("taken: %+v", sc)
	}
	third := next + 24*time.Hour.Milliseconds()
	if out := st.Apply(st.Seq()+1, &Event{Kind: EvFire, At: third, Name: "cup", Occ: third, Board: BoardName("cup", third, maltaZone), MaxBoards: 1}); out.Err != nil {
		t.Fatal(out.Err)
	}
	if sc, _ := st.ScheduleOf("cup", third); !strings.HasPrefix(sc.LastError, "boards:") {
		t.Fatalf("board limit: %+v", sc)
	}
	other := &Schedule{Every: "day", At: "10:00", Duration: "1h"}
	mustApply(t, st, &Event{Kind: EvSchedule, At: t0, Name: "b", Schedule: other, MaxSchedules: 2})
	if out := st.Apply(st.Seq()+1, &Event{Kind: EvSchedule, At: t0, Name: "c", Schedule: other, MaxSchedules: 2}); !errors.Is(out.Err, ErrLimit) {
		t.Fatalf("a third schedule past a limit of 2: %v", out.Err)
	}
	mustApply(t, st, &Event{Kind: EvUnschedule, Name: "cup"})
	if !st.HasBoard("cup-20260329-2000") || len(st.Schedules(third)) != 1 {
		t.Fatal("a delete took a board with it, or kept the schedule")
	}
	if out := st.Apply(st.Seq()+1, &Event{Kind: EvUnschedule, Name: "cup"}); !errors.Is(out.Err, ErrNotFound) {
		t.Fatalf("a second delete: %v", out.Err)
	}
}

// TestScheduleSnapshot: schedules survive a snapshot byte for byte, and
// an RWSNAP6 snapshot reads as a state without schedules.
func TestScheduleSnapshot(t *testing.T) {
	st := scheduleScene(t, utc(t, "2026-03-28T12:00:00Z"))
	start := utc(t, "2026-03-28T19:00:00Z")
	if err := fire(st, Firing{Schedule: "cup", Start: start}, start); err != nil {
		t.Fatal(err)
	}
	back, data := reencoded(t, st)
	if again, _ := back.Encode(nil); !bytes.Equal(again, data) {
		t.Fatal("schedules do not survive a snapshot")
	}
	if due := back.Due(start + 1); len(due) != 0 {
		t.Fatalf("a decoded state fires again: %v", due)
	}
	plain := New()
	mustApply(t, plain, &Event{Kind: EvSettings, Board: "b", Settings: &Settings{}})
	cur, _ := plain.encode(&snapWriter{buf: []byte(snapMagicV7), v7: true})
	v6, err := plain.encode(&snapWriter{buf: []byte(snapMagicV6), v6: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(v6[len(snapMagic):len(v6)-4], cur[len(snapMagic):len(cur)-5]) {
		t.Fatal("RWSNAP6 is not RWSNAP7 without the schedules' count")
	}
	old, err := Decode(v6, nil)
	if err != nil {
		t.Fatalf("RWSNAP6: %v", err)
	}
	if got, _ := old.encode(&snapWriter{buf: []byte(snapMagicV7), v7: true}); !bytes.Equal(got, cur) {
		t.Fatal("an RWSNAP6 snapshot reads as another state")
	}
}
