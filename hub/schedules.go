package hub

import (
	"context"
	"errors"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

// Schedule is a schedule as PUT carries it (ledger.Schedule).
type Schedule = ledger.Schedule

// ScheduleInfo is a schedule as reads return it (ledger.ScheduleInfo).
type ScheduleInfo = ledger.ScheduleInfo

// MaxScheduleNameLen is the longest name of a schedule: its boards' names
// add 14 characters (ledger.BoardName).
const MaxScheduleNameLen = ledger.MaxScheduleNameLen

// ValidScheduleName reports whether name may name a schedule.
func ValidScheduleName(name string) bool { return ledger.ValidScheduleName(name) }

// Firing is an occurrence of a tenant's schedule due for its board.
type Firing struct {
	Tenant string
	ledger.Firing
}

// Schedules is a tenant's schedules of tournament boards: put, read and
// deleted through it, and fired by the ticker (package
// internal/scheduler) through Due and Fire. It is the Hub's, got with
// SchedulesOf; its methods are safe for concurrent use.
type Schedules struct{ h *Hub }

// SchedulesOf returns h's schedules of tournament boards. A function, not
// a Hub method: the Hub type keeps to its budget of methods (issue 20).
func SchedulesOf(h *Hub) Schedules { return Schedules{h} }

// Put creates or replaces tenant's schedule name, within its quota's
// Schedules (zero: no limit), and returns it. ErrBadRequest naming the
// field; ErrLimit naming schedules.
func (s Schedules) Put(ctx context.Context, tenant, name string, sc Schedule) (ScheduleInfo, error) {
	h := s.h
	if err := checkScheduleNames(tenant, name); err != nil {
		return ScheduleInfo{}, err
	}
	norm, err := sc.Normalize()
	if err != nil {
		return ScheduleInfo{}, err
	}
	r, err := h.replica(ctx, tenant, true)
	if err != nil {
		return ScheduleInfo{}, err
	}
	q := h.quota.of(tenant)
	if err := r.read(func(st *ledger.State) error { return st.CheckScheduleLimit(name, q.Schedules) }); err != nil {
		return ScheduleInfo{}, err
	}
	ev := &ledger.Event{Kind: ledger.EvSchedule, Name: name, Schedule: &norm, MaxSchedules: q.Schedules}
	if err := h.streams.commitErr(ctx, r, ev); err != nil {
		return ScheduleInfo{}, err
	}
	return s.Get(tenant, name)
}

// Delete deletes tenant's schedule name; the boards it created stay.
// ErrNotFound where there is none.
func (s Schedules) Delete(ctx context.Context, tenant, name string) error {
	h := s.h
	if err := checkScheduleNames(tenant, name); err != nil {
		return err
	}
	r, err := h.replica(ctx, tenant, false)
	if errors.Is(err, ErrNotFound) {
		return errorf(ErrNotFound, "schedule %q", name)
	}
	if err != nil {
		return err
	}
	return h.streams.commitErr(ctx, r, &ledger.Event{Kind: ledger.EvUnschedule, Name: name})
}

// Get returns tenant's schedule name. ErrNotFound where there is none.
// Read lock.
func (s Schedules) Get(tenant, name string) (in ScheduleInfo, err error) {
	if err := checkScheduleNames(tenant, name); err != nil {
		return in, err
	}
	now := s.h.cfg.Now().UnixMilli()
	err = s.h.reg.readTenant(tenant, func() error { return errorf(ErrNotFound, "schedule %q", name) },
		func(st *ledger.State) (err error) {
			in, err = st.ScheduleOf(name, now)
			return err
		})
	return in, err
}

// List returns tenant's schedules by name (none where the tenant is not
// open here). O(schedules) under the read lock.
func (s Schedules) List(tenant string) (out []ScheduleInfo) {
	now := s.h.cfg.Now().UnixMilli()
	_ = s.h.reg.readTenant(tenant, nil, func(st *ledger.State) error {
		out = st.Schedules(now)
		return nil
	})
	return out
}

// Due returns the occurrences of every open tenant's schedules due for
// their board at now. O(tenants + schedules), each tenant under its read
// lock for its own schedules only.
func (s Schedules) Due(now time.Time) []Firing {
	var out []Firing
	for _, r := range s.h.reg.openReplicas() {
		_ = r.read(func(st *ledger.State) error {
			if st.HasSchedules() {
				for _, f := range st.Due(now.UnixMilli()) {
					out = append(out, Firing{Tenant: r.tenant, Firing: f})
				}
			}
			return nil
		})
	}
	return out
}

// Fire publishes the EvFire of f to its tenant's stream with f's message
// id (ledger.Firing.MsgID), so that of the copies every node publishes
// within the stream's duplicate window one is stored, and returns once it
// is stored; apply creates the board once whatever arrives later. It does
// not wait for the local replica to apply it.
func (s Schedules) Fire(ctx context.Context, f Firing) error {
	h := s.h
	r := h.reg.lookup(f.Tenant)
	if r == nil {
		return errorf(ErrNotFound, "tenant %q", f.Tenant)
	}
	return h.streams.send(ctx, r, &ledger.Event{Kind: ledger.EvFire, Waiter: f.MsgID(f.Tenant), Name: f.Schedule, Occ: f.Start,
		Board: f.Board, MaxBoards: h.quota.of(f.Tenant).Boards})
}

// checkScheduleNames checks tenant and a schedule's name (a board name
// short enough for its boards' names).
func checkScheduleNames(tenant, name string) error {
	if err := checkNames(tenant, ""); err != nil {
		return err
	}
	if !ledger.ValidScheduleName(name) {
		return errorf(ErrBadRequest, "schedule: %q is not a board name of at most %d characters", ledger.Clip(name), ledger.MaxScheduleNameLen)
	}
	return nil
}
