package hub

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantConflict(t *testing.T, err error, field string) {
	t.Helper()
	var he *Error
	if !errors.As(err, &he) || !errors.Is(err, ErrConflict) || !strings.HasPrefix(he.Msg, field+": ") {
		t.Fatalf("err = %v, want a conflict naming %s", err, field)
	}
}

// A tournament board takes submissions accepted from starts_at (included)
// to ends_at (excluded), decided by the acceptance time; after the end its
// standings, with prizes, never change: no submission, removal, reset,
// change of its times or prizes, nor a merge of two of its members; every
// node and a restart show the same standings.
func TestTournamentOpenClose(t *testing.T) {
	url := startNATS(t)
	dir := t.TempDir()
	start, end := mustTime(t, "2026-12-01T00:00:00Z"), mustTime(t, "2026-12-08T00:00:00Z")
	clk := newClock(start.Add(-time.Hour))
	h := startHub(t, Config{Now: clk.now, NATSURL: url, DataDir: dir})
	set := Settings{StartsAt: "2026-12-01T01:00:00+01:00", EndsAt: "2026-12-08T00:00:00Z",
		Prizes: []Prize{{From: 2, To: 10, Prize: "€1,000"}, {From: 1, To: 1, Prize: "€10,000"}}}
	info, err := h.PutBoard(testCtx(t), "t1", "poker", set)
	if err != nil {
		t.Fatal(err)
	}
	if info.Settings.StartsAt != "2026-12-01T00:00:00.000Z" || info.Settings.Prizes[0].From != 1 {
		t.Fatalf("normalized settings %+v", info.Settings)
	}
	mustPut(t, h, "t1", "open", Settings{})
	sub := func(member string, score float64) error {
		_, err := h.Submit(testCtx(t), "t1", "poker", []Item{{Member: member, Score: score}})
		return err
	}
	wantConflict(t, sub("early", 1), "starts_at")
	clk.set(start)
	for i := range 12 {
		if err := sub("p"+string(rune('a'+i)), float64(100-i)); err != nil {
			t.Fatalf("at starts_at: %v", err)
		}
	}
	mustSubmit(t, h, "t1", "open", Item{Member: "pa", Score: 1}, Item{Member: "pb", Score: 2})
	if st, _ := h.Disputes().Standings("t1", "poker", 0, 100); st.Final || st.EndedAt != "" || len(st.Rows) != 12 {
		t.Fatalf("standings while open: %+v", st)
	}
	clk.set(end.Add(-time.Millisecond))
	if err := sub("pl", 1000); err != nil {
		t.Fatalf("a millisecond before the end: %v", err)
	}
	clk.set(end)
	wantConflict(t, sub("late", 1), "ends_at")
	wantConflict(t, h.RemoveMember(testCtx(t), "t1", "poker", "pa"), "ends_at")
	wantConflict(t, h.Reset(testCtx(t), "t1", "poker"), "ends_at")
	moved := set
	moved.EndsAt = "2026-12-09T00:00:00Z"
	_, err = h.PutBoard(testCtx(t), "t1", "poker", moved)
	wantConflict(t, err, "ends_at")
	repriced := set
	repriced.Prizes = []Prize{{From: 1, To: 3, Prize: "€5"}}
	_, err = h.PutBoard(testCtx(t), "t1", "poker", repriced)
	wantConflict(t, err, "prizes")
	kept := set
	kept.Retention = 3
	if _, err := h.PutBoard(testCtx(t), "t1", "poker", kept); err != nil {
		t.Fatalf("a setting that does not touch the standings: %v", err)
	}
	before, _ := h.Disputes().Standings("t1", "poker", 0, 100)
	if _, err := h.Link(testCtx(t), "t1", "pa", []string{"pb"}); err != nil { // merges pb into pa
		t.Fatal(err)
	}
	if got := top(t, h, Loc{Tenant: "t1", Board: "open"}); !slices.Equal(got, []string{"pa:2"}) {
		t.Fatalf("the open board after the merge: %v", got)
	}
	after, _ := h.Disputes().Standings("t1", "poker", 0, 100)
	if !slices.Equal(after.Rows, before.Rows) || after.Seq != before.Seq {
		t.Fatalf("the ended board changed with a merge:\n%+v\n%+v", before.Rows, after.Rows)
	}
	if after.Final || after.EndedAt != "2026-12-08T00:00:00.000Z" {
		t.Fatalf("just after the end: final %v ended %q", after.Final, after.EndedAt)
	}
	clk.set(end.Add(ledger.FinalAfter))
	final, _ := h.Disputes().Standings("t1", "poker", 0, 100)
	if !final.Final || len(final.Rows) != 12 {
		t.Fatalf("final standings: %+v", final)
	}
	wantPrize := map[int]string{1: "€10,000", 2: "€1,000", 10: "€1,000", 11: ""}
	for r, p := range wantPrize {
		if got := final.Rows[r-1].Prize; got != p {
			t.Errorf("rank %d prize %q, want %q", r, got, p)
		}
	}
	if final.Rows[0].Member != "pl" {
		t.Fatalf("rank 1 %+v, want pl (the last submission before the end)", final.Rows[0])
	}

	other := startHub(t, Config{Now: clk.now, NATSURL: url, DiscoverInterval: -1})
	if _, err := other.replica(testCtx(t), "t1", false); err != nil {
		t.Fatal(err)
	}
	if string(fingerprint(t, h, "t1")) != string(fingerprint(t, other, "t1")) {
		t.Fatal("another node replaying the stream has other standings")
	}
	h.Close()
	again := startHub(t, Config{Now: clk.now, NATSURL: url, DataDir: dir})
	if st, _ := again.Disputes().Standings("t1", "poker", 0, 100); !slices.Equal(st.Rows, final.Rows) || !st.Final {
		t.Fatalf("after a restart: %+v", st)
	}
}

// Tournament settings are checked field by field.
func TestTournamentSettingsRefused(t *testing.T) {
	long := strings.Repeat("€", 50)
	tests := []struct {
		set  Settings
		want string
	}{
		{Settings{StartsAt: "tomorrow"}, "starts_at: \"tomorrow\" is not an RFC 3339 time"},
		{Settings{EndsAt: "1999-01-01T00:00:00Z"}, "ends_at: "},
		{Settings{StartsAt: "2026-12-02T00:00:00Z", EndsAt: "2026-12-01T00:00:00Z"}, "ends_at: 2026-12-01T00:00:00.000Z is not after starts_at"},
		{Settings{StartsAt: "2026-12-01T00:00:00Z", EndsAt: "2026-12-01T00:00:00Z"}, "ends_at: "},
		{Settings{Prizes: []Prize{{From: 0, To: 1, Prize: "x"}}}, "prizes[0].from: 0 is not in 1.."},
		{Settings{Prizes: []Prize{{From: 3, To: 2, Prize: "x"}}}, "prizes[0].to: 2 is not in 3.."},
		{Settings{Prizes: []Prize{{From: 1, To: 1, Prize: ""}}}, "prizes[0].prize: 0 bytes"},
		{Settings{Prizes: []Prize{{From: 1, To: 1, Prize: long}}}, "prizes[0].prize: 150 bytes"},
		{Settings{Prizes: []Prize{{From: 1, To: 1, Prize: "a\nb"}}}, "prizes[0].prize: invalid UTF-8 or a control character"},
		{Settings{Prizes: []Prize{{From: 1, To: 5, Prize: "a"}, {From: 5, To: 6, Prize: "b"}}}, "prizes: ranks 5..6 overlap ranks 1..5"},
		{Settings{Prizes: make([]Prize, MaxPrizes+1)}, "prizes: 101 ranges"},
	}
	for _, tt := range tests {
		_, err := tt.set.Normalize()
		var he *Error
		if !errors.As(err, &he) || !errors.Is(err, ErrBadRequest) || !strings.HasPrefix(he.Msg, tt.want) {
			t.Errorf("%+v: %v, want a bad request %q", tt.set, err, tt.want)
		}
	}
}
