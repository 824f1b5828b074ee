package hub

import (
	"slices"
	"testing"
)

func TestWindows(t *testing.T) {
	clk := newClock(date(2026, 3, 4))
	h := startHub(t, Config{Now: clk.now})
	mustPut(t, h, "t1", "b", Settings{Windows: []string{"day", "week", "all"}, Retention: 2})
	mustSubmit(t, h, "t1", "b", Item{Member: "a", Score: 1})
	clk.set(date(2026, 3, 5))
	mustSubmit(t, h, "t1", "b", Item{Member: "b", Score: 2})
	day := func(d int) Loc { return Loc{Tenant: "t1", Board: "b", Window: "day", At: date(2026, 3, d)} }
	if got := top(t, h, day(4)); !slices.Equal(got, []string{"a:1"}) {
		t.Errorf("day 4: %v", got)
	}
	if got := top(t, h, day(5)); !slices.Equal(got, []string{"b:2"}) {
		t.Errorf("day 5: %v", got)
	}
	if got := top(t, h, Loc{Tenant: "t1", Board: "b", Window: "week"}); !slices.Equal(got, []string{"b:2", "a:1"}) {
		t.Errorf("week: %v", got)
	}
	clk.set(date(2026, 3, 7)) // day 4 falls out of retention (keeps 5, 6, 7)
	mustSubmit(t, h, "t1", "b", Item{Member: "c", Score: 3})
	if p, _ := h.Top(day(4), 0, nil, 10); p.Total != 0 {
		t.Errorf("day 4 kept past retention: %+v", p)
	}
	if got := top(t, h, day(5)); !slices.Equal(got, []string{"b:2"}) {
		t.Errorf("day 5 dropped within retention: %v", got)
	}
	if err := h.Reset(testCtx(t), "t1", "b"); err != nil {
		t.Fatal(err)
	}
	if got := top(t, h, Loc{Tenant: "t1", Board: "b"}); len(got) != 0 {
		t.Errorf("all after reset: %v", got)
	}
	if got := top(t, h, Loc{Tenant: "t1", Board: "b", Window: "week"}); len(got) != 3 {
		t.Errorf("week after reset: %v", got)
	}
	_, err := h.Top(Loc{Tenant: "t1", Board: "b", Window: "month"}, 0, nil, 10)
	wantErr(t, err, ErrBadRequest)
	res := mustSubmit(t, h, "t1", "b", Item{Member: "d", Score: 9})
	if res[0].Rank != 1 || res[0].Seq != 5 {
		t.Errorf("result reports the all window: %+v", res[0])
	}
}
