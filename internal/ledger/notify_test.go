package ledger

import (
	"math"
	"strconv"
	"testing"
	"time"
)

// NextDue names the first time a board's end or a window's close comes
// due, DueNotifications finds it due then and not a millisecond before,
// and a state with nothing that ends or closes has no next due.
func TestNextDue(t *testing.T) {
	st := New()
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC).UnixMilli()
	at := day + 3_600_000 // 01:00
	settle := FinalAfter.Milliseconds()
	st.Apply(1, &Event{Kind: EvSettings, At: at, Board: "a", Settings: &Settings{}})
	if got := st.NextDue(at); got != math.MaxInt64 {
		t.Fatalf("a board that never ends nor closes is due at %d", got)
	}
	ends := day + 2*3_600_000
	if out := st.Apply(2, &Event{Kind: EvSettings, At: at, Board: "t", Settings: &Settings{Windows: []string{"day", "all"}, EndsAt: FormatTime(ends)}}); !out.Schedule || out.Err != nil {
		t.Fatalf("a settings event: %+v, want Schedule", out)
	}
	st.Apply(3, &Event{Kind: EvSubmit, At: at, Board: "t", Items: []Item{{Member: "p", Score: 1}}})
	none := func(string) bool { return false }
	if got := st.NextDue(at); got != ends+settle {
		t.Fatalf("next due %s, want the end %s", FormatTime(got), FormatTime(ends+settle))
	}
	if notes := st.DueNotifications("x", ends+settle-1, none); len(notes) != 0 {
		t.Fatalf("due before the end settled: %+v", notes)
	}
	notes := st.DueNotifications("x", ends+settle, none)
	if len(notes) != 1 || notes[0].Type != "board.ended" || len(notes[0].Rows) != 1 {
		t.Fatalf("at the end: %+v", notes)
	}
	next := day + 24*3_600_000 + settle // the day window closes
	if got := st.NextDue(ends + settle); got != next {
		t.Fatalf("after the end: next due %s, want the day's close %s", FormatTime(got), FormatTime(next))
	}
	notes = st.DueNotifications("x", next, func(id string) bool { return id == "board.ended:t:"+strconv.FormatInt(ends, 10) })
	if len(notes) != 1 || notes[0].Type != "window.closed" || notes[0].Window != "day:2026-03-10" {
		t.Fatalf("at the day's close: %+v", notes)
	}
	if out := st.Apply(4, &Event{Kind: EvDelete, At: next, Board: "t"}); !out.Schedule {
		t.Fatal("a deletion does not move the schedule")
	}
	if got := st.NextDue(next); got != math.MaxInt64 {
		t.Fatalf("without the tournament: next due %s", FormatTime(got))
	}
}

// HeldNotes walks every board's held submissions from its cursor, skips
// what sent reports and what is older than NotifyDedup, stops at limit
// and resumes where it stopped.
func TestHeldNotes(t *testing.T) {
	st := New()
	at := time.Date(2026, 3, 10, 1, 0, 0, 0, time.UTC).UnixMilli()
	max := 10.0
	for i, b := range []string{"b", "a"} {
		st.Apply(uint64(1+i), &Event{Kind: EvSettings, At: at, Board: b, Settings: &Settings{Rules: &Rules{MaxScore: &max}}})
	}
	old := at - NotifyDedup.Milliseconds() - 1
	st.Apply(3, &Event{Kind: EvSubmit, At: old, Board: "a", Items: []Item{{Member: "stale", Score: 99}}})
	st.Apply(4, &Event{Kind: EvSubmit, At: at, Board: "a", Items: []Item{{Member: "x", Score: 99}, {Member: "y", Score: 99}}})
	st.Apply(5, &Event{Kind: EvSubmit, At: at, Board: "b", Items: []Item{{Member: "z", Score: 99}}})
	sent := func(id string) bool { return id == "submission.quarantined:a:2" }
	notes, c, done := st.HeldNotes("t", at, NoteCursor{}, 1, sent)
	if done || len(notes) != 1 || notes[0].ID != "submission.quarantined:a:3" || notes[0].Member != "y" {
		t.Fatalf("first page: %+v %+v %v", notes, c, done)
	}
	notes, c, done = st.HeldNotes("t", at, c, 10, sent)
	if !done || len(notes) != 1 || notes[0].ID != "submission.quarantined:b:1" || notes[0].Tenant != "t" {
		t.Fatalf("second page: %+v %+v %v", notes, c, done)
	}
}
