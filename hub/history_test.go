package hub

import (
	"errors"
	"testing"
	"time"
)

// History: past windows' final standings newest first, the member's own
// changes in the current window newest first (applied ones only), bounded
// at 100; errors for an unknown member or a kind the board does not keep.
func TestHistory(t *testing.T) {
	day1 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	clk := newClock(day1)
	h := startHub(t, Config{Now: clk.now, NATSURL: startNATS(t)})
	mustPut(t, h, "t1", "b", Settings{Windows: []string{"day", "all"}})
	mustPut(t, h, "t1", "days", Settings{Windows: []string{"day"}})
	for _, b := range []string{"b", "days"} {
		mustSubmit(t, h, "t1", b, Item{Member: "p1", Score: 10})
		clk.set(clk.now().Add(time.Second))
		mustSubmit(t, h, "t1", b, Item{Member: "p1", Score: 20})
		mustSubmit(t, h, "t1", b, Item{Member: "p2", Score: 30})
		mustSubmit(t, h, "t1", b, Item{Member: "p1", Score: 15}) // best keeps 20: no point
	}
	loc := Loc{Tenant: "t1", Board: "b"}
	pts, err := h.History(loc, "p1")
	if err != nil || len(pts) != 2 || pts[0].Score != 20 || pts[0].Rank != 1 || pts[0].Total != 1 ||
		pts[1].Score != 10 || pts[0].At != day1.Add(time.Second).UnixMilli() || pts[0].Window != "" {
		t.Fatalf("own changes: %+v %v", pts, err)
	}
	clk.set(day1.Add(24 * time.Hour)) // the next day
	mustSubmit(t, h, "t1", "days", Item{Member: "p1", Score: 1})
	loc.Window = "day"
	pts, err = h.History(loc, "p1")
	if err != nil || len(pts) != 1 || pts[0].Window != "2026-11-21" || pts[0].Rank != 2 || pts[0].Score != 20 || pts[0].Total != 2 {
		t.Fatalf("past days: %+v %v", pts, err)
	}
	// On a board whose primary window is the day, the current day's own
	// changes start afresh.
	if pts, _ := h.History(Loc{Tenant: "t1", Board: "days"}, "p1"); len(pts) != 1 || pts[0].Score != 1 {
		t.Fatalf("a new day's own changes: %+v", pts)
	}
	var items []Item
	for i := range 150 {
		items = append(items, Item{Member: "p3", Score: float64(100 + i)})
	}
	mustSubmit(t, h, "t1", "b", items...)
	loc.Window = ""
	if pts, _ := h.History(loc, "p3"); len(pts) != MaxHistoryPoints || pts[0].Score != 249 || pts[99].Score != 150 {
		t.Fatalf("150 changes: %d points, newest %+v", len(pts), pts[0])
	}
	if _, err := h.History(loc, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown member: %v", err)
	}
	if _, err := h.History(Loc{Tenant: "t1", Board: "b", Window: "month"}, "p1"); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("a kind the board does not keep: %v", err)
	}
	if _, err := h.History(Loc{Tenant: "t1", Board: "nope"}, "p1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown board: %v", err)
	}
}
