package api

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

// Schedules over HTTP against the real hub: put, read, list, pause and
// delete; each refusal naming its field; the write refused to a token
// that does not reach every board; the limit of casino-b's key file; and
// an occurrence fired (as the ticker does) creating casino-a's board only,
// while casino-b's schedule of the same name keeps its own.
func TestSchedulesOverHTTP(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC).UnixMilli()) // a Friday
	e := newClockEnv(t, &now)
	admin, other := e.token("a", auth.RoleAdmin), e.token("b", auth.RoleAdmin)
	spec := `{"every":"week","weekday":"friday","at":"20:00","time_zone":"Europe/Malta","duration":"1h",
		"settings":{"prizes":[{"from":1,"to":3,"prize":"€100"}]}}`
	out := e.must(200, "PUT", "/v1/schedules/cup", admin, spec)
	if out["next"] != "2026-11-27T19:00:00.000Z" || out["next_board"] != "cup-20261127-2000" || out["create_ahead"] != "1h0m0s" ||
		out["time_zone"] != "Europe/Malta" || out["paused"] != false {
		t.Fatalf("put: %v", out)
	}
	// casino-b's "cup" is daily at 21:00 UTC: another schedule.
	e.must(200, "PUT", "/v1/schedules/cup", other, `{"every":"day","at":"21:00","duration":"30m"}`)

	for _, c := range []struct{ path, body, field string }{
		{"/v1/schedules/cup", `{"every":"hourly","at":"20:00","duration":"1h"}`, "every"},
		{"/v1/schedules/cup", `{"every":"day","at":"25:00","duration":"1h"}`, "at"},
		{"/v1/schedules/cup", `{"every":"day","at":"20:00","duration":"1h","time_zone":"Moon/Base"}`, "time_zone"},
		{"/v1/schedules/cup", `{"every":"day","at":"20:00","duration":"1h","settings":{"ends_at":"2030-01-01T00:00:00Z"}}`, "settings.starts_at"},
		{"/v1/schedules/cup", `{"every":"day","at":"20:00","duration":"1h","settings":{"policy":"most"}}`, "settings.policy"},
		{"/v1/schedules/" + strings.Repeat("x", 51), `{"every":"day","at":"20:00","duration":"1h"}`, "schedule"},
	} {
		out := e.must(400, "PUT", c.path, admin, c.body)
		if _, msg := errCode(out); !strings.HasPrefix(msg, c.field) {
			t.Errorf("%s: %q does not name %s", c.body, msg, c.field)
		}
	}
	narrow := e.token("a", auth.RoleAdmin, "cup*")
	if _, msg := errCode(e.must(403, "PUT", "/v1/schedules/cup", narrow, spec)); !strings.Contains(msg, "every board") {
		t.Errorf("a token of some boards: %q", msg)
	}
	e.must(403, "DELETE", "/v1/schedules/cup", narrow, "")
	e.must(403, "GET", "/v1/schedules", e.token("a", auth.RoleRead), "")
	e.must(404, "GET", "/v1/schedules/nope", admin, "")

	// casino-b's key file allows 2 schedules.
	e.must(200, "PUT", "/v1/schedules/two", other, `{"every":"day","at":"01:00","duration":"1h"}`)
	if code, msg := errCode(e.must(429, "PUT", "/v1/schedules/three", other, `{"every":"day","at":"01:00","duration":"1h"}`)); code != "rate_limited" || !strings.HasPrefix(msg, "schedules") {
		t.Errorf("past the limit: %s %q", code, msg)
	}

	// 19:30 Malta: casino-a's occurrence is due, casino-b's (21:00 UTC) not yet.
	now.Store(time.Date(2026, 11, 27, 18, 30, 0, 0, time.UTC).UnixMilli())
	due := hub.SchedulesOf(e.hub).Due(time.UnixMilli(now.Load()))
	if len(due) != 1 || due[0].Tenant != "casino-a" {
		t.Fatalf("due: %+v", due)
	}
	if err := hub.SchedulesOf(e.hub).Fire(context.Background(), due[0]); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	checkFor(t, 5*time.Second, func() error {
		if got = e.must(200, "GET", "/v1/schedules/cup", admin, ""); got["last_board"] != "cup-20261127-2000" {
			return fmt.Errorf("not fired: %v", got)
		}
		return nil
	})
	if got["next"] != "2026-12-04T19:00:00.000Z" {
		t.Errorf("after firing: %v", got)
	}
	board := e.must(200, "GET", "/v1/boards/cup-20261127-2000", admin, "")
	if board["starts_at"] != "2026-11-27T19:00:00.000Z" || board["ends_at"] != "2026-11-27T20:00:00.000Z" {
		t.Errorf("the board: %v", board)
	}
	e.must(404, "GET", "/v1/boards/cup-20261127-2000", other, "")
	if b := e.must(200, "GET", "/v1/schedules/cup", other, ""); b["last_board"] != nil || b["next"] != "2026-11-27T21:00:00.000Z" {
		t.Errorf("casino-b's schedule felt casino-a's: %v", b)
	}

	paused := e.must(200, "PUT", "/v1/schedules/cup", admin, strings.Replace(spec, `"every"`, `"paused":true,"every"`, 1))
	if paused["paused"] != true || paused["next"] != nil || paused["last_board"] != "cup-20261127-2000" {
		t.Errorf("paused: %v", paused)
	}
	list := e.must(200, "GET", "/v1/schedules", admin, "")
	if s := list["schedules"].([]any); len(s) != 1 {
		t.Errorf("list: %v", list)
	}
	e.must(200, "DELETE", "/v1/schedules/cup", admin, "")
	e.must(404, "GET", "/v1/schedules/cup", admin, "")
	e.must(200, "GET", "/v1/boards/cup-20261127-2000", admin, "")
	e.must(200, "GET", "/v1/schedules/cup", other, "")
}
