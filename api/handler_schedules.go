package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/wire"
)

// Schedules of tournament boards (PROTOCOL.md "Schedules"): an admin's
// recurrence from which the gateway creates boards. Role admin for every
// route (the table of effects); a write needs a token that reaches every
// board too, since a schedule creates boards of names no pattern was
// checked against (internal/effects: ReachEvery without Apply).

// scheduleName returns the route's {schedule}, checked: a board name
// short enough that its boards' names are board names.
func scheduleName(r *http.Request) (string, error) {
	name := chi.URLParam(r, "schedule")
	if !hub.ValidScheduleName(name) {
		return "", badRequest("schedule: %q is not a board name of at most %d characters", truncate(name), hub.MaxScheduleNameLen)
	}
	return name, nil
}

func (s *Server) putSchedule(w http.ResponseWriter, r *http.Request) error {
	name, err := scheduleName(r)
	if err != nil {
		return err
	}
	var body wire.ScheduleSpec
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	in, err := hub.SchedulesOf(s.hub).Put(r.Context(), scopeOf(r).Tenant, name, toSchedule(body))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toWireSchedule(in))
	return nil
}

func (s *Server) getSchedule(w http.ResponseWriter, r *http.Request) error {
	name, err := scheduleName(r)
	if err != nil {
		return err
	}
	in, err := hub.SchedulesOf(s.hub).Get(scopeOf(r).Tenant, name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toWireSchedule(in))
	return nil
}

func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request) error {
	out := wire.ScheduleList{Schedules: []wire.Schedule{}}
	for _, in := range hub.SchedulesOf(s.hub).List(scopeOf(r).Tenant) {
		out.Schedules = append(out.Schedules, toWireSchedule(in))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) deleteSchedule(w http.ResponseWriter, r *http.Request) error {
	name, err := scheduleName(r)
	if err != nil {
		return err
	}
	if err := hub.SchedulesOf(s.hub).Delete(r.Context(), scopeOf(r).Tenant, name); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.Unscheduled{Unscheduled: name})
	return nil
}

// toSchedule is the hub's form of a PUT /v1/schedules/{schedule} body.
func toSchedule(b wire.ScheduleSpec) hub.Schedule {
	sc := hub.Schedule{Every: b.Every, Weekday: b.Weekday, Day: b.Day, At: b.At, TimeZone: b.TimeZone,
		Duration: b.Duration, CreateAhead: b.CreateAhead, Paused: b.Paused}
	if b.Settings != nil {
		sc.Settings = toSettings(*b.Settings)
	}
	return sc
}

// toWireSchedule is a schedule as the protocol shows it.
func toWireSchedule(in hub.ScheduleInfo) wire.Schedule {
	sc, set := in.Schedule, in.Schedule.Settings
	out := wire.Schedule{Name: in.Name, Every: sc.Every, Weekday: sc.Weekday, Day: sc.Day, At: sc.At,
		TimeZone: sc.TimeZone, Duration: sc.Duration, CreateAhead: sc.CreateAhead, Paused: sc.Paused,
		Settings: wire.Settings{Order: set.Order, SubscoreOrder: set.SubscoreOrder, Policy: set.Policy,
			Tiebreak: set.Tiebreak, Windows: set.Windows, Retention: set.Retention, TimeZone: set.TimeZone,
			WeekStarts: set.WeekStarts, Prizes: toPrizes(set.Prizes),
			Rules: (*wire.Rules)(set.Rules)},
		LastBoard: in.LastBoard, LastError: in.LastError}
	if in.Next != 0 {
		out.Next, out.NextBoard = hub.FormatTime(in.Next), in.NextBoard
	}
	if in.Last != 0 {
		out.Last = hub.FormatTime(in.Last)
	}
	return out
}
