package ledger

import "encoding/json"

// The schedules' part of a snapshot (layout in snapshot.go).

// schedules writes the tenant's schedules by name.
func (w *snapWriter) schedules(s *State) {
	names := s.scheduleNames()
	w.uint(uint64(len(names)))
	for _, name := range names {
		sc := s.schedules[name]
		data, _ := json.Marshal(sc.sched) // plain fields: never fails
		w.str(name)
		w.bytes(data)
		w.int(sc.since)
		w.int(sc.last)
		w.str(sc.lastBoard)
		w.str(sc.lastErr)
	}
}

// schedules reads the schedules: names increasing and valid, each
// schedule normalized as apply left it.
func (r *snapReader) schedules(s *State) {
	prev := ""
	for n := r.count(); n > 0 && r.err == nil; n-- {
		name := r.str()
		var sc Schedule
		if err := json.Unmarshal(r.bytes(), &sc); err != nil || r.err != nil || !ValidScheduleName(name) || name <= prev {
			r.fail("schedule")
			return
		}
		prev = name
		norm, err := sc.Normalize()
		if err != nil {
			r.fail("schedule " + name + ": " + err.Error())
			return
		}
		rec, _ := norm.recurrence()
		st := &schedState{sched: norm, rec: rec, since: r.int(), last: r.int(), lastBoard: r.str(), lastErr: r.str()}
		if s.schedules == nil {
			s.schedules = map[string]*schedState{}
		}
		s.schedules[name] = st
	}
}
