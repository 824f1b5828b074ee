package api

import (
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/tzdb"
)

// TestLocalDateReads: a board's time zone comes back with its settings,
// and at= is a date of that zone: on a Chatham board (+12:45 or +13:45,
// where UTC's noon of a date is already the next day) today's local date
// reads today's window. A second tenant's board of the same name keeps UTC.
func TestLocalDateReads(t *testing.T) {
	e := newEnv(t, Config{})
	admin := e.token("a", auth.RoleAdmin)
	out := e.must(200, "PUT", "/v1/boards/daily", admin, `{"windows":["day"],"time_zone":"Pacific/Chatham","week_starts":"sunday"}`)
	if out["time_zone"] != "Pacific/Chatham" || out["week_starts"] != "sunday" {
		t.Fatalf("board %v", out)
	}
	twin := e.must(200, "PUT", "/v1/boards/daily", e.token("b", auth.RoleAdmin), `{"windows":["day"]}`)
	if twin["time_zone"] != "UTC" || twin["week_starts"] != "monday" {
		t.Fatalf("tenant b's board %v, want the defaults", twin)
	}
	chatham, err := tzdb.Load("Pacific/Chatham")
	if err != nil {
		t.Fatal(err)
	}
	e.must(200, "POST", "/v1/boards/daily/scores", admin, `{"member":"p1","score":5}`)
	for range 2 { // once more where the submission straddled Chatham's midnight
		today := time.Now().In(chatham).Format(time.DateOnly)
		rows := e.must(200, "GET", "/v1/boards/daily/top?window=day&at="+today, admin, "")["rows"].([]any)
		if len(rows) == 1 {
			break
		}
		if !strings.HasPrefix(time.Now().In(chatham).Format(time.TimeOnly), "00:00") {
			t.Fatalf("at=%s (today in Chatham): %d rows, want the submission just made", today, len(rows))
		}
		e.must(200, "POST", "/v1/boards/daily/scores", admin, `{"member":"p1","score":5}`)
	}
	e.must(409, "PUT", "/v1/boards/daily", admin, `{"windows":["day"],"time_zone":"UTC"}`)
}
