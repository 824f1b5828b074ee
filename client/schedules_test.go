package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/client"
)

// The schedule calls against a real gateway: put, read, list, pause and
// delete; a refusal naming its field; the twin tenant's schedule of the
// same name untouched.
func TestScheduleCalls(t *testing.T) {
	g := startGateway(t)
	ctx := context.Background()
	c, twin := g.client(t, "t1", "k1", auth.RoleAdmin), g.client(t, "t2", "k2", auth.RoleAdmin)
	spec := client.ScheduleSpec{Every: "week", Weekday: "friday", At: "20:00", TimeZone: "Europe/Malta", Duration: "1h",
		Settings: &client.Settings{Prizes: []client.Prize{{From: 1, To: 3, Prize: "€100"}}}}
	s, err := c.PutSchedule(ctx, "cup", spec)
	if err != nil || s.Name != "cup" || s.CreateAhead != "1h0m0s" || !strings.HasPrefix(s.NextBoard, "cup-") || len(s.Settings.Prizes) != 1 {
		t.Fatalf("PutSchedule: %+v %v", s, err)
	}
	if _, err := twin.PutSchedule(ctx, "cup", client.ScheduleSpec{Every: "day", At: "21:00", Duration: "30m"}); err != nil {
		t.Fatal(err)
	}
	spec.Paused = true
	if s, err := c.PutSchedule(ctx, "cup", spec); err != nil || !s.Paused || s.Next != "" {
		t.Fatalf("paused: %+v %v", s, err)
	}
	if _, err := c.PutSchedule(ctx, "cup", client.ScheduleSpec{Every: "day", At: "7pm", Duration: "1h"}); !client.IsCode(err, "bad_request") ||
		!strings.Contains(err.Error(), "at:") {
		t.Fatalf("a bad time: %v", err)
	}
	if list, err := c.Schedules(ctx); err != nil || len(list) != 1 || !list[0].Paused {
		t.Fatalf("Schedules: %+v %v", list, err)
	}
	if err := c.DeleteSchedule(ctx, "cup"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Schedule(ctx, "cup"); !client.IsCode(err, "not_found") {
		t.Fatalf("after delete: %v", err)
	}
	if s, err := twin.Schedule(ctx, "cup"); err != nil || s.Every != "day" || s.Paused {
		t.Fatalf("the twin's schedule: %+v %v", s, err)
	}
}
