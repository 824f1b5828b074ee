package ledger

import (
	"maps"
	"slices"
	"strings"

	"github.com/rankwire/rankwire/internal/names"
)

// A tenant's schedules as state (schedule.go has their shape). Three
// events change them: EvSchedule puts one (create, replace, pause,
// resume), EvUnschedule deletes one (the boards it created stay), and
// EvFire creates the board of one occurrence. Nothing here reads a clock:
// the hub's ticker asks Due which occurrences are due at its now and
// publishes an EvFire for each (with a message id of the tenant, schedule
// and occurrence, so that JetStream drops the other nodes' copies); apply
// checks the occurrence against the schedule and the event's acceptance
// time, and creates its board at most once: a schedule remembers the
// start of the last occurrence it fired, and an EvFire at or before it
// changes nothing.

// schedState is one schedule.
type schedState struct {
	sched Schedule   // normalized
	rec   recurrence // parsed from sched
	// since: no occurrence starting before it is fired (the schedule's
	// creation, or its last resume, in acceptance time).
	since int64
	last  int64 // the start of the last occurrence fired (unix ms); 0: none yet
	// lastBoard is the board the last occurrence created, lastErr why it
	// created none ("" where it did).
	lastBoard, lastErr string
}

// ScheduleInfo is a schedule as reads return it.
type ScheduleInfo struct {
	Name     string
	Schedule Schedule
	Next     int64 // start of the next occurrence to be fired (unix ms); 0 while paused
	// NextBoard is the name of the board Next would create.
	NextBoard string
	// Last is the start of the last occurrence fired (0: none yet), with
	// the board it created or why it created none.
	Last      int64
	LastBoard string
	LastError string
}

// Firing is an occurrence due for its board: the hub publishes an EvFire.
type Firing struct {
	Schedule string
	Start    int64  // the occurrence's start (unix ms)
	Board    string // its board's name (BoardName)
}

// MsgID is the JetStream message id of the firing's event in tenant's
// stream: the same on every node, so that one copy is stored.
func (f Firing) MsgID(tenant string) string {
	return "fire/" + tenant + "/" + f.Schedule + "/" + FormatTime(f.Start)
}

// applySchedule puts a schedule: creates it (within ev.MaxSchedules,
// zero: no limit) or replaces it, keeping what it fired.
func (s *State) applySchedule(ev *Event) error {
	if ev.Schedule == nil || !ValidScheduleName(ev.Name) {
		return errorf(ErrInternal, "schedule missing")
	}
	sc, err := ev.Schedule.Normalize()
	if err != nil {
		return err
	}
	rec, _ := sc.recurrence() // normalized: parses
	old := s.schedules[ev.Name]
	if old == nil {
		if err := s.CheckScheduleLimit(ev.Name, ev.MaxSchedules); err != nil {
			return err
		}
		if s.schedules == nil {
			s.schedules = map[string]*schedState{}
		}
		s.schedules[ev.Name] = &schedState{sched: sc, rec: rec, since: ev.At}
		return nil
	}
	if old.sched.Paused && !sc.Paused {
		old.since = ev.At // a resume fires no occurrence that started while paused
	}
	old.sched, old.rec = sc, rec
	return nil
}

// applyUnschedule deletes a schedule; its boards stay.
func (s *State) applyUnschedule(ev *Event) error {
	if s.schedules[ev.Name] == nil {
		return errorf(ErrNotFound, "schedule %q", Clip(ev.Name))
	}
	delete(s.schedules, ev.Name)
	return nil
}

// checkFire fails with ErrConflict for an occurrence already fired, one
// that started before the schedule was created or resumed, or one accepted
// at at outside its window: from create_ahead before its start to its
// end; and with ErrBadRequest for a board name that is not the schedule's.
// It reads no time-zone rule: the occurrence and its board's name travel
// in the event (the ticker computed them), so that nodes whose time-zone
// databases differed would still apply it alike.
func (sc *schedState) checkFire(name string, occ, at int64, board string) error {
	r := &sc.rec
	switch {
	case occ <= sc.last:
		return errorf(ErrConflict, "occurrence %s: fired already", FormatTime(occ))
	case sc.sched.Paused:
		return errorf(ErrConflict, "paused: the schedule is paused")
	case occ < sc.since:
		return errorf(ErrConflict, "occurrence %s: before the schedule was created or resumed", FormatTime(occ))
	case at < occ-r.ahead || at >= occ+r.duration:
		return errorf(ErrConflict, "occurrence %s: fired at %s, outside its time", FormatTime(occ), FormatTime(at))
	case !names.Valid(board) || len(board) != len(name)+len("-YYYYMMDD-HHMM") || !strings.HasPrefix(board, name+"-"):
		return errorf(ErrBadRequest, "board: %q is not a board name of schedule %q", Clip(board), name)
	}
	return nil
}

// applyFire creates the board ev.Board of the occurrence of schedule
// ev.Name that starts at ev.Occ, once; checkFire's refusals change nothing. A board that
// cannot be created (its name is taken, the tenant's board limit, within
// ev.MaxBoards) still consumes the occurrence, and the schedule says why
// (lastErr): a retry would fail alike.
func (s *State) applyFire(ev *Event) error {
	sc := s.schedules[ev.Name]
	if sc == nil {
		return errorf(ErrNotFound, "schedule %q", Clip(ev.Name))
	}
	if err := sc.checkFire(ev.Name, ev.Occ, ev.At, ev.Board); err != nil {
		return err
	}
	sc.last, sc.lastBoard, sc.lastErr = ev.Occ, "", ""
	name := ev.Board
	set := sc.sched.Settings
	set.StartsAt, set.EndsAt = FormatTime(ev.Occ), FormatTime(ev.Occ+sc.rec.duration)
	set, err := set.normalize() // a copy of the template's prizes and rules
	if err == nil {
		err = s.CheckBoardLimit(name, ev.MaxBoards)
	}
	switch {
	case s.boards[name] != nil:
		sc.lastErr = "board " + name + " exists already"
	case err != nil:
		sc.lastErr = err.(*Error).Msg
	default:
		s.boards[name] = s.newBoardState(set)
		sc.lastBoard = name
	}
	return nil
}

// floor is the time after which sc's next occurrence to fire starts at
// now: after the last fired, not before since, and not yet ended.
func (sc *schedState) floor(now int64) int64 {
	return max(sc.last, sc.since-1, now-sc.rec.duration)
}

// Due returns the occurrences due for their board at now (unix ms): for
// each schedule not paused, the first occurrence after its last fired that
// has not ended, where now is create_ahead or less before its start. At
// most one per schedule; by name. O(schedules). Read lock.
func (s *State) Due(now int64) []Firing {
	var out []Firing
	for _, name := range s.scheduleNames() {
		sc := s.schedules[name]
		if sc.sched.Paused {
			continue
		}
		if occ := sc.rec.next(sc.floor(now)); occ-sc.rec.ahead <= now {
			out = append(out, Firing{Schedule: name, Start: occ, Board: BoardName(name, occ, sc.rec.loc)})
		}
	}
	return out
}

// HasSchedules reports whether the tenant has a schedule. O(1). Read lock.
func (s *State) HasSchedules() bool { return len(s.schedules) > 0 }

// scheduleNames returns the schedules' names, sorted: Due, reads and the
// snapshot walk them in one order on every node.
func (s *State) scheduleNames() []string { return slices.Sorted(maps.Keys(s.schedules)) }

// Schedules returns every schedule at now (unix ms), by name.
// O(schedules). Read lock.
func (s *State) Schedules(now int64) []ScheduleInfo {
	out := make([]ScheduleInfo, 0, len(s.schedules))
	for _, name := range s.scheduleNames() {
		out = append(out, s.schedules[name].info(name, now))
	}
	return out
}

// ScheduleOf returns schedule name at now (unix ms); ErrNotFound where
// there is none. Read lock.
func (s *State) ScheduleOf(name string, now int64) (ScheduleInfo, error) {
	sc := s.schedules[name]
	if sc == nil {
		return ScheduleInfo{}, errorf(ErrNotFound, "schedule %q", Clip(name))
	}
	return sc.info(name, now), nil
}

// CheckScheduleLimit fails with ErrLimit where creating schedule name
// would take the tenant past max (zero: no limit); for the hub's ingest
// check (apply decides again). Read lock.
func (s *State) CheckScheduleLimit(name string, max int) error {
	if max <= 0 || s.schedules[name] != nil || len(s.schedules) < max {
		return nil
	}
	return errorf(ErrLimit, "schedules: the tenant has %d schedules, its limit", len(s.schedules))
}

func (sc *schedState) info(name string, now int64) ScheduleInfo {
	in := ScheduleInfo{Name: name, Schedule: sc.sched, Last: sc.last, LastBoard: sc.lastBoard, LastError: sc.lastErr}
	in.Schedule.Settings.Prizes = slices.Clone(in.Schedule.Settings.Prizes)
	if !sc.sched.Paused {
		in.Next = sc.rec.next(sc.floor(now))
		in.NextBoard = BoardName(name, in.Next, sc.rec.loc)
	}
	return in
}
