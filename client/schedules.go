package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/rankwire/rankwire/wire"
)

// Schedules of tournament boards (docs/PROTOCOL.md, "Schedules"): the
// gateway creates a board for each occurrence of a recurrence in local
// time. Every call needs role admin; PutSchedule and DeleteSchedule a
// token that reaches every board too.
type (
	// ScheduleSpec is what PutSchedule sends: the recurrence, each board's
	// duration and the template of its settings.
	ScheduleSpec = wire.ScheduleSpec
	// Schedule is a schedule as the gateway holds it, with its next and
	// last occurrence.
	Schedule = wire.Schedule
)

func schedulePath(name string) string { return "/v1/schedules/" + url.PathEscape(name) }

// PutSchedule creates or replaces schedule name (pause or resume it with
// spec.Paused) and returns it as stored.
func (c *Client) PutSchedule(ctx context.Context, name string, spec ScheduleSpec) (Schedule, error) {
	var out Schedule
	return out, c.do(ctx, http.MethodPut, schedulePath(name), nil, spec, &out)
}

// Schedule reads schedule name.
func (c *Client) Schedule(ctx context.Context, name string) (Schedule, error) {
	var out Schedule
	return out, c.do(ctx, http.MethodGet, schedulePath(name), nil, nil, &out)
}

// Schedules lists the tenant's schedules, by name.
func (c *Client) Schedules(ctx context.Context) ([]Schedule, error) {
	var out wire.ScheduleList
	return out.Schedules, c.do(ctx, http.MethodGet, "/v1/schedules", nil, nil, &out)
}

// DeleteSchedule deletes schedule name; the boards it created stay.
func (c *Client) DeleteSchedule(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, schedulePath(name), nil, nil, nil)
}
