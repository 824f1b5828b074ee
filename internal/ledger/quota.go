package ledger

// Quotas of what a tenant creates besides boards and submissions. Like the
// board limit (Event.MaxBoards), each limit in force travels in the event
// that could exceed it, and apply decides in stream order: every node
// refuses the same events, whatever its own key file says, and a replay
// decides as the first apply did. Zero (old events, callers that set none)
// means no limit.

// Quota is a tenant's limits that apply enforces. Zero fields mean none.
type Quota struct {
	Profiles int // members with a profile (EvProfile)
	Aliases  int // aliases of one member, after a link and its merges (EvLink)
	Held     int // quarantined items per board (EvSubmit, EvGroup); MaxHeld caps it anyway
	// Boards caps the boards a schedule's occurrence may take the tenant
	// to (EvFire); Schedules its schedules (EvSchedule).
	Boards    int
	Schedules int
}

// checkProfileLimit fails with ErrLimit, naming profiles, where giving
// member a profile would take the tenant past max members with one. A
// member that has one already passes (a replacement adds nothing). O(1).
func (s *State) checkProfileLimit(member string, max int) error {
	if max <= 0 || len(s.profiles) < max {
		return nil
	}
	if h, ok := s.ix.Resolve(member); ok {
		if _, has := s.profiles[h]; has {
			return nil
		}
	}
	return errorf(ErrLimit, "profiles: the tenant has %d members with a profile, its limit", len(s.profiles))
}

// CheckProfileLimit is checkProfileLimit for the hub's ingest check (apply
// decides again). Read lock.
func (s *State) CheckProfileLimit(member string, max int) error {
	return s.checkProfileLimit(member, max)
}

// checkAliasLimit fails with ErrLimit, naming aliases, where linking
// aliases to member would leave member with more than max aliases,
// counting those that merges bring. Exact: it counts what Link would add
// (a new name: one; another member: its id and its aliases; a name member
// already owns: none), each distinct name or member once. O(len(aliases) +
// aliases of the members merged).
func (s *State) checkAliasLimit(member string, aliases []string, max int) error {
	if max <= 0 {
		return nil
	}
	h, known := s.ix.Resolve(member)
	n := 0
	if known {
		n = len(s.ix.Aliases(h))
	}
	names := map[string]bool{member: true} // an alias equal to an unknown member is a no-op
	merged := map[uint32]bool{}
	for _, a := range aliases {
		o, ok := s.ix.Resolve(a)
		switch {
		case !ok && !names[a]:
			names[a] = true
			n++
		case ok && (!known || o != h) && !merged[o]:
			merged[o] = true
			n += 1 + len(s.ix.Aliases(o))
		}
	}
	if n > max {
		return errorf(ErrLimit, "aliases: the member would have %d aliases; the limit is %d", n, max)
	}
	return nil
}

// CheckAliasLimit is checkAliasLimit for the hub's ingest check (apply
// decides again). Read lock.
func (s *State) CheckAliasLimit(member string, aliases []string, max int) error {
	return s.checkAliasLimit(member, aliases, max)
}

// Profiles returns how many members have a profile. O(1). Read lock.
func (s *State) Profiles() int { return len(s.profiles) }

// HeldNow returns the items the tenant's boards hold in quarantine,
// undecided, and the most one board holds. O(boards). Read lock.
func (s *State) HeldNow() (total, most int) {
	for _, bs := range s.boards {
		n := len(bs.quarantine.held)
		total += n
		most = max(most, n)
	}
	return total, most
}

// heldCap is the most items a board may hold under limit (0: MaxHeld).
func heldCap(limit int) int {
	if limit <= 0 {
		return MaxHeld
	}
	return min(limit, MaxHeld)
}

// capHeld sets, for the event being applied, the quarantine cap of each
// existing board among boards: the event's limit travels with it, so that
// every node holds and refuses the same items.
func (s *State) capHeld(limit int, boards ...string) {
	for _, b := range boards {
		if bs := s.boards[b]; bs != nil {
			bs.quarantine.cap = limit
		}
	}
}

// Usage is what a tenant's state holds against its limits, and an
// estimate of its memory.
type Usage struct {
	Boards, Members, Profiles int
	Schedules                 int
	Aliases                   int // aliases of the member that has the most
	HeldTotal, HeldMost       int // quarantined items: all boards, and the board holding the most
	Entries                   int // rows of every window of every board
	AliasesAll                int // aliases of every member
	MemoryBytes               int64
}

// Bytes per thing held, measured by TestMemoryPerThing (quota_mem_test.go,
// amd64, ids of 7 to 8 bytes, profiles of a 12-byte name): the heap that
// holding one more costs. Longer ids and names cost their bytes more.
const (
	memPerMember  = 55  // identity index: handle, name, table slot
	memPerEntry   = 100 // a window's row: skip-list node, index slot; 70 to 136 as the reserve doubles
	memPerProfile = 100 // profile map slot and its strings
	memPerHeld    = 100 // a held item, its member's review count
	memPerAlias   = 80  // identity index: name, table slot, set link
	memPerBoard   = 4 << 10
)

// Usage returns s's Usage. O(alias sets + boards × windows): the most
// aliases walks the index's sets. Read lock.
func (s *State) Usage() Usage {
	u := Usage{Boards: len(s.boards), Members: s.ix.Len(), Profiles: len(s.profiles), Schedules: len(s.schedules)}
	u.HeldTotal, u.HeldMost = s.HeldNow()
	for _, bs := range s.boards {
		for _, w := range bs.windows {
			u.Entries += w.b.Len()
		}
	}
	u.Aliases, u.AliasesAll = s.ix.MostAliases(), s.ix.NumAliases()
	u.MemoryBytes = int64(u.Members)*memPerMember + int64(u.Entries)*memPerEntry +
		int64(u.Profiles)*memPerProfile + int64(u.HeldTotal)*memPerHeld + int64(u.Boards)*memPerBoard +
		int64(u.AliasesAll)*memPerAlias
	return u
}
