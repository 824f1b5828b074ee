package live

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
)

// testClock is the hub's clock in these tests: the time events are
// stamped with, so the time that decides a board's current window.
type testClock struct{ ms atomic.Int64 }

func (c *testClock) set(rfc3339 string) {
	t, err := time.Parse(time.RFC3339, rfc3339)
	if err != nil {
		panic(err)
	}
	c.ms.Store(t.UnixMilli())
}

func (c *testClock) now() time.Time { return time.UnixMilli(c.ms.Load()).UTC() }

// noPoll turns the follow poll off: a test moves followers by the change
// feed or by calling rollover itself, at a clock it set.
func noPoll(p *Plane) { p.followEvery = 0 }

// TestFollowRollsOver follows Malta's day window over a real WebSocket
// across the night summer time begins (a day of 23 hours): at each local
// midnight the following subscription's next message is the new window's
// snapshot, moved by the poll (a quiet board) or by the change feed (a
// submission in the new window), while a subscription that does not
// follow stays on its day, and another tenant's board of the same name
// feels nothing.
func TestFollowRollsOver(t *testing.T) {
	clk := &testClock{}
	clk.set("2026-03-28T22:59:00Z") // 23:59 in Malta (CET)
	e := newEnvHub(t, hub.Config{Now: clk.now}, Options{HeartbeatInterval: -1}, nil, noPoll)
	malta := hub.Settings{Windows: []string{"day"}, TimeZone: "Europe/Malta"}
	e.putBoard("a", "daily", malta)
	e.putBoard("b", "daily", hub.Settings{Windows: []string{"day"}})
	e.submit("a", "daily", hub.Item{Member: "late", Score: 10})
	e.submit("b", "daily", hub.Item{Member: "other", Score: 7})

	wc := e.dial("access_token="+e.token("a", admin), true, nil)
	top := map[string]any{"kind": "top"}
	wc.Send(map[string]any{"type": "subscribe", "id": "f", "board": "daily", "window": "day", "follow": true, "view": top})
	wc.Send(map[string]any{"type": "subscribe", "id": "n", "board": "daily", "window": "day", "view": top})
	wb := e.dial("access_token="+e.token("b", admin), true, nil)
	wb.Send(map[string]any{"type": "subscribe", "id": "f", "board": "daily", "window": "day", "follow": true, "view": top})
	awaitRows(t, wc, "f", "late")
	awaitRows(t, wc, "n", "late")
	awaitRows(t, wb, "f", "other")

	clk.set("2026-03-28T23:00:00Z") // 00:00 on 29 March in Malta; still the 28th in UTC
	e.p.rollover()
	awaitRows(t, wc, "f") // the new day's snapshot: empty
	e.submit("a", "daily", hub.Item{Member: "early", Score: 3})
	awaitRows(t, wc, "f", "early")
	awaitRows(t, wc, "n", "late") // the non-following view stays on the 28th

	// 29 March has 23 hours in Malta: the next midnight is 22:00 UTC. No
	// poll this time: the submission's batch moves the follower.
	clk.set("2026-03-29T22:00:00Z")
	e.submit("a", "daily", hub.Item{Member: "monday", Score: 1})
	awaitRows(t, wc, "f", "monday")
	awaitRows(t, wc, "n", "late")
	if rows, _ := wb.Rows("f"); len(rows) != 1 || rows[1].Member != "other" {
		t.Errorf("tenant b's view: %v, want its own board unchanged", rows)
	}
	snaps := 0
	for _, m := range wc.Messages() {
		if m.Type == "snapshot" && *m.ID == "f" {
			snaps++
		}
	}
	if snaps != 3 {
		t.Errorf("%d snapshots of the following view, want 3 (subscribe, then one per turnover)", snaps)
	}
	for _, m := range wb.Messages() {
		if m.Type != "snapshot" {
			t.Errorf("tenant b got %s: %+v", m.Type, m)
		}
	}
}

// awaitRows waits until subscription id of wc shows exactly members, in
// rank order.
func awaitRows(t *testing.T, wc *wsClient, id string, members ...string) {
	t.Helper()
	checkFor(t, 5*time.Second, func() error {
		rows, ok := wc.Rows(id)
		if !ok {
			return fmt.Errorf("no snapshot of %s", id)
		}
		got := make([]string, len(rows))
		for r, row := range rows {
			if r < 1 || r > len(rows) {
				return fmt.Errorf("%s: rank %d of %d rows", id, r, len(rows))
			}
			got[r-1] = row.Member
		}
		if fmt.Sprint(got) != fmt.Sprint(members) {
			return fmt.Errorf("%s shows %v, want %v", id, got, members)
		}
		return nil
	})
}

// TestFollowRefused: follow needs a window that turns over, now.
func TestFollowRefused(t *testing.T) {
	e := newEnv(t, Options{HeartbeatInterval: -1})
	e.putBoard("a", "daily", hub.Settings{Windows: []string{"all", "day"}})
	wc := e.dial("access_token="+e.token("a", admin), true, nil)
	top := map[string]any{"kind": "top"}
	wc.Send(map[string]any{"type": "subscribe", "id": "1", "board": "daily", "follow": true, "view": top})
	wc.Send(map[string]any{"type": "subscribe", "id": "2", "board": "daily", "window": "day", "at": "2026-01-01", "follow": true, "view": top})
	checkFor(t, 5*time.Second, func() error {
		if n := len(wc.Errors()); n != 2 {
			return fmt.Errorf("%d errors", n)
		}
		return nil
	})
	for _, m := range wc.Errors() {
		if m.Code != "bad_request" || len(m.Message) < 7 || m.Message[:7] != "follow:" {
			b, _ := json.Marshal(m)
			t.Errorf("refusal %s, want bad_request naming follow", b)
		}
	}
}

// TestFollowStream follows over Server-Sent Events (follow=true): the
// poll moves the stream to the new day.
func TestFollowStream(t *testing.T) {
	clk := &testClock{}
	clk.set("2026-07-14T02:59:59Z") // 23:59:59 in São Paulo (-03, no summer time since 2019)
	e := newEnvHub(t, hub.Config{Now: clk.now}, Options{HeartbeatInterval: -1}, nil, noPoll)
	e.putBoard("a", "daily", hub.Settings{Windows: []string{"day"}, TimeZone: "America/Sao_Paulo", WeekStarts: "sunday"})
	e.submit("a", "daily", hub.Item{Member: "late", Score: 10})
	s := e.stream("board=daily&window=day&kind=top&follow=true", e.token("a", admin), nil)
	if ev := s.next(); ev.Event != "snapshot" || !json.Valid([]byte(ev.Data)) {
		t.Fatalf("first event %+v", ev)
	}
	clk.set("2026-07-14T03:00:00Z")
	e.p.rollover()
	ev := s.next()
	var m wsMsg
	if err := json.Unmarshal([]byte(ev.Data), &m); err != nil || ev.Event != "snapshot" || len(m.Rows) != 0 {
		t.Fatalf("after midnight: %+v, want the new day's empty snapshot", ev)
	}
	resp := e.tryStream("board=daily&window=day&kind=top&follow=yes", e.token("a", admin), nil)
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("follow=yes: %d, want 400", resp.StatusCode)
	}
}
