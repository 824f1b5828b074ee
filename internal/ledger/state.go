package ledger

import (
	"slices"

	"github.com/rankwire/rankwire/board"
	"github.com/rankwire/rankwire/identity"
)

// State is one tenant's replicated state: a deterministic function of the
// events applied so far. Not safe for concurrent use: one goroutine (the
// hub's replica) applies events, under a write lock that readers take for
// reading; Apply may call the hooks SetYield and SetLanes install.
type State struct {
	ix     *identity.Index // never replaced: boards' CompareMembers bind it
	boards map[string]*boardState
	seq    uint64   // stream sequence of the last applied event
	feed   *feedLog // changes for live views; nil records nothing (see feed.go)

	// profiles are the members' public profiles by handle (profile.go);
	// nil until the first.
	profiles map[uint32]Profile

	// schedules are the tenant's schedules by name (schedule_state.go);
	// nil until the first.
	schedules map[string]*schedState

	// maxMembers is the most member ids the tenant may hold (SetMaxMembers).
	maxMembers uint32

	// yield, where set, is called by apply every applySlice items of a
	// submission: the replica releases and retakes its write lock there, so
	// that reads wait for a slice rather than a whole event. It must not
	// change s. steps counts the items applied, for it.
	yield func()
	steps int

	// lanes, where set, runs the lanes of a group event (lanes.go); nil
	// applies every group in order on the caller's goroutine.
	lanes func(n int, f func(i int))

	// journal, set only on a VoidPlanner's own state, records the
	// submissions of one board (dispute_plan.go); nil records nothing.
	journal *voidJournal
}

// SetYield makes apply call yield every applySlice items (nil: never).
// yield must not change s: the hub's replica releases and retakes its
// write lock there.
func (s *State) SetYield(yield func()) { s.yield = yield }

// SetLanes makes apply run the lanes of an event that writes several
// boards (lanes.go) through run, which must call f(0) … f(n-1), in any
// order or at once, and return when all have returned. nil applies the
// groups one after another. Either way the outcome and the state are the
// same.
func (s *State) SetLanes(run func(n int, f func(i int))) { s.lanes = run }

// SetMaxMembers lowers the most member ids the tenant may hold (tests;
// the default is board.MaxMember). A submission past it is kept unranked.
func (s *State) SetMaxMembers(n uint32) { s.maxMembers = min(n, board.MaxMember) }

// RecordFeed makes apply record its changes for live views from now on
// (feed.go); TakeFeed takes them.
func (s *State) RecordFeed() { s.feed = newFeedLog() }

// Seq returns the stream sequence of the last event applied (or skipped).
func (s *State) Seq() uint64 { return s.seq }

// Skip consumes the event at seq without applying it: one that did not
// decode, skipped identically on every node.
func (s *State) Skip(seq uint64) { s.seq = seq }

// applySlice is how many items apply takes between two calls of yield.
const applySlice = 64

// step counts one item about to be applied and yields every applySlice.
func (s *State) step() {
	s.steps++
	if s.yield != nil && s.steps%applySlice == 0 {
		s.yield()
	}
}

// boardState is one board: its settings, windows and seen idempotency ids
// (seen.go: kept until the board is deleted, or for the retention the
// events carry).
type boardState struct {
	settings   Settings
	cfg        board.Config
	cal        calendar // the settings' calendar: how time cuts into windows
	windows    map[windowKey]*window
	newest     [len(kindNames)]int64 // newest window start per kind, where has
	has        [len(kindNames)]bool
	seen       *seenIDs
	starts     int64 // settings' StartsAt and EndsAt in unix ms; 0: unset
	ends       int64
	quarantine quarantine // held submissions and per-minute counts (rules.go)
	history    history    // recent changes of the primary window (history.go)
	fresh      []Held     // held by the event being applied: its Outcome (apply.go)
	disputes   disputes   // disqualifications, revision, settlement, admin log (dispute.go)
	// final holds, once the board has ended, the profiles its members had
	// at the end, recorded before the first change after it (profile.go);
	// the zero Profile records none. Nil until such a change.
	final map[uint32]Profile
	// gen tells this board from one made again under its name after a
	// delete (Window.Gen): one past the sequence of the event that made it,
	// or of the snapshot it was decoded from. An event makes at most one
	// board, and a board's name is taken from the event that made it to
	// its delete's, so the boards of one name have increasing gens in
	// every State of the tenant, replayed or decoded: a State that replaces
	// another (a rebuild) never gives a board made again the gen of a
	// deleted one that live views were made under. Never encoded.
	gen uint64
}

// window is one board-window and its version: seq grows by one for every
// applied change, never resets (a reset bumps it too).
type window struct {
	b    *board.Board
	seq  uint64
	key  windowKey // its key in boardState.windows, for the change feed
	name string    // its key's name in the board's calendar (calendar.name)
	room int       // entries the board has room for, as reserve last grew it
}

// minReserve is the fewest entries reserve adds room for: small, so that a
// board-window of a few entries (a tournament of ten players) costs a few
// kilobytes; a growing one reserves half its size each time.
const minReserve = 16

// reserve grows w's board ahead by half its size once it is full, so that
// a growing board copies its arena about once per 1.5× instead of on every
// step of append (1.25× for large slices). Room costs memory only, never
// changes the board's content. Replica goroutine only (it writes w.b).
func (w *window) reserve() {
	if n := w.b.Len(); n >= w.room {
		add := max(n/2, minReserve)
		w.b.Grow(add)
		w.room = n + add
	}
}

// New returns the state of a tenant with no events.
func New() *State {
	return &State{ix: identity.New(), boards: make(map[string]*boardState), maxMembers: board.MaxMember}
}

// newBoardState returns an empty board with normalized settings s.
func (s *State) newBoardState(set Settings) *boardState {
	cfg, _ := set.boardConfig() // normalized settings always parse
	cfg.CompareMembers = s.ix.Compare
	starts, ends := set.times()
	return &boardState{
		gen:      s.seq + 1, // never zero: Window.Gen's "no board"
		settings: set,
		cfg:      cfg,
		cal:      calendarOf(set),
		windows:  make(map[windowKey]*window),
		seen:     newSeenIDs(),
		starts:   starts,
		ends:     ends,
	}
}

// newBoard returns an empty board.Board with the board's config.
func (bs *boardState) newBoard() *board.Board {
	b, err := board.New(bs.cfg)
	if err != nil {
		panic("ledger: board config from normalized settings: " + err.Error()) // programmer error
	}
	return b
}

// keeps reports whether the board keeps windows of kind k.
func (bs *boardState) keeps(k kind) bool {
	return slices.Contains(bs.settings.Windows, k.String())
}

// hasEntries reports whether any window holds an entry. O(windows).
func (bs *boardState) hasEntries() bool {
	for _, w := range bs.windows {
		if w.b.Len() > 0 {
			return true
		}
	}
	return false
}

// open returns the window k, creating it, or nil where k is older than the
// retention keeps (an event stamped far behind the newest one). Creating a
// newer window drops the windows that fall out of retention.
func (bs *boardState) open(k windowKey) *window {
	if w := bs.windows[k]; w != nil {
		return w
	}
	if k.kind != kindAll && bs.has[k.kind] && k.start < bs.cutoff(k.kind) {
		return nil
	}
	w := &window{b: bs.newBoard(), key: k, name: bs.cal.name(k)}
	bs.windows[k] = w
	if !bs.has[k.kind] || k.start > bs.newest[k.kind] {
		bs.newest[k.kind], bs.has[k.kind] = k.start, true
		bs.prune(k.kind)
	}
	return w
}

// cutoff is the oldest window start of kind k that retention keeps.
func (bs *boardState) cutoff(k kind) int64 {
	return bs.cal.back(windowKey{k, bs.newest[k]}, bs.settings.Retention).start
}

// prune drops the windows of kind k older than the retention keeps.
// O(windows); the order of deletion does not matter.
func (bs *boardState) prune(k kind) {
	if k == kindAll || !bs.has[k] {
		return
	}
	c := bs.cutoff(k)
	for key := range bs.windows {
		if key.kind == k && key.start < c {
			delete(bs.windows, key)
		}
	}
}

// dropUnkept drops the windows of kinds the settings no longer keep.
func (bs *boardState) dropUnkept() {
	for key := range bs.windows {
		if !bs.keeps(key.kind) {
			delete(bs.windows, key)
			bs.has[key.kind] = false
		}
	}
}

// sortedWindows returns the window keys in snapshot order.
func (bs *boardState) sortedWindows() []windowKey {
	keys := make([]windowKey, 0, len(bs.windows))
	for k := range bs.windows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, windowKey.compare)
	return keys
}

// sortedBoards returns the board names in snapshot order.
func (s *State) sortedBoards() []string {
	names := make([]string, 0, len(s.boards))
	for name := range s.boards {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
