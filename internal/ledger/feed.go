package ledger

import (
	"slices"
	"sync"

	"github.com/rankwire/rankwire/board"
	"github.com/rankwire/rankwire/identity"
)

// The change feed: under the replica's write lock, apply appends each
// applied change of a board-window to the tenant's feedLog (an append
// under a mutex no reader holds for long); the hub's feed goroutine takes
// them every push interval under the read lock (TakeFeed) and hands each
// board-window's batch to the live views with a Window that reads the
// board as it stands after exactly those changes. Reading under the same
// lock the changes were taken under makes the batch and the board agree.

// maxPending bounds the changes one board-window accumulates between ticks
// (a stalled feed goroutine, a huge batch); past it the changes are dropped
// and the batch says Reset: the consumer recomputes every view.
const maxPending = 1 << 16

// FeedChange is one applied mutation of a board-window: the board's report,
// the board-window's seq after it and its number of entries after it.
type FeedChange struct {
	board.Change
	Seq   uint64
	Total int
}

// feedKey names a board-window inside a tenant.
type feedKey struct {
	board string
	key   windowKey
}

// pendingWindow is one board-window's changes since the last tick.
type pendingWindow struct {
	name    string // the window's name (calendar.name), kept for a board deleted since
	changes []FeedChange
	reset   bool
	deleted bool // the board was deleted since the last tick (and may be made again since)
}

// feedLog is one tenant's changes since the last tick. Apply appends
// (the hub's replica holds its lock for writing; lanes of one event append
// at once); TakeFeed takes (the lock held for reading); Window.Pending
// peeks.
type feedLog struct {
	mu      sync.Mutex // guards pending; taken after the hub's replica.mu
	pending map[feedKey]*pendingWindow
}

func newFeedLog() *feedLog { return &feedLog{pending: map[feedKey]*pendingWindow{}} }

func (f *feedLog) window(fk feedKey, name string) *pendingWindow {
	p := f.pending[fk]
	if p == nil {
		p = &pendingWindow{name: name}
		f.pending[fk] = p
	}
	return p
}

// note records cs, applied to w of board. A nil log records nothing.
func (f *feedLog) note(board string, w *window, cs ...board.Change) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.window(feedKey{board, w.key}, w.name)
	for _, c := range cs {
		if !c.Applied && !c.Moved() {
			continue
		}
		if len(p.changes) >= maxPending {
			p.changes, p.reset = nil, true
		}
		p.changes = append(p.changes, FeedChange{Change: c, Seq: w.seq, Total: w.b.Len()})
	}
}

// reset records that window w of board was replaced or deleted.
func (f *feedLog) reset(board string, w *window) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.window(feedKey{board, w.key}, w.name)
	p.changes, p.reset = nil, true
}

// deleted records that board, window w of it among them, was deleted:
// the batch of w says Deleted (and Reset), whatever follows in the tick (a
// board made again under the name). applyDelete records the all window's
// key as well, so that a board with no window yet has a batch that says it.
func (f *feedLog) deleted(board string, key windowKey, name string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.window(feedKey{board, key}, name)
	p.changes, p.reset, p.deleted = nil, true, true
}

// take returns and forgets the pending changes.
func (f *feedLog) take() map[feedKey]*pendingWindow {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.pending
	if len(out) > 0 {
		f.pending = map[feedKey]*pendingWindow{}
	}
	return out
}

// peek returns a copy of fk's pending changes.
func (f *feedLog) peek(fk feedKey) []FeedChange {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.pending[fk]; p != nil {
		return slices.Clone(p.changes)
	}
	return nil
}

// FeedBatch is what happened to one board-window since the last tick.
type FeedBatch struct {
	Tenant, Board string       // Tenant: set by the hub
	Window        string       // the window's instance: "all", "week:2026-01-05"
	Changes       []FeedChange // oldest first
	Reset         bool         // replaced wholesale (reset, delete, overflow): recompute everything
	// Deleted says the board was deleted since the last tick: its live
	// views end (it may have been made again since, under the same name:
	// Window.Gen tells the new board's views from the old). Reset too.
	Deleted bool
}

// TakeFeed hands fn every board-window's changes since the last call (its
// FeedBatch without Tenant), with a Window that reads the board as it
// stands after them, and forgets them. It reports whether there were any.
// Read lock: fn must be short and call nothing that takes the lock.
// O(changes).
func (s *State) TakeFeed(fn func(FeedBatch, Window)) bool {
	pending := s.feed.take()
	for fk, p := range pending {
		win := s.windowOf(fk)
		win.name = p.name
		fn(FeedBatch{Board: fk.board, Window: p.name, Changes: p.changes, Reset: p.reset, Deleted: p.deleted}, win)
	}
	return len(pending) > 0
}

// Window is one board-window as the change feed's consumer reads it, valid
// only while the read lock it was taken under is held (the hub's
// Feed.Apply, or the function given to its ReadWindow). Every method is read-only.
type Window struct {
	ix       *identity.Index
	w        *window // nil: the window holds nothing
	log      *feedLog
	fk       feedKey
	name     string // the window's name: FeedBatch.Window
	profiles map[uint32]Profile
	final    map[uint32]Profile // the board's profiles at its end (profile.go)
	q        *quarantine        // the board's; nil where the board is gone
	gen      uint64             // the board's boardState.gen; 0 where the board is gone
}

func (s *State) windowOf(fk feedKey) Window {
	win := Window{ix: s.ix, log: s.feed, fk: fk, profiles: s.profiles, name: utcCalendar.name(fk.key)}
	if bs := s.boards[fk.board]; bs != nil {
		win.name = bs.cal.name(fk.key)
		win.w = bs.windows[fk.key]
		win.q = &bs.quarantine
		win.final = bs.final
		win.gen = bs.gen
	}
	return win
}

// Key returns the name of the window's instance, as FeedBatch.Window has it.
func (v Window) Key() string { return v.name }

// Board returns the board-window's board, or nil where it holds nothing.
// The caller must not modify it.
func (v Window) Board() *board.Board {
	if v.w == nil {
		return nil
	}
	return v.w.b
}

// Seq returns the board-window's version.
func (v Window) Seq() uint64 {
	if v.w == nil {
		return 0
	}
	return v.w.seq
}

// Gen returns the board's generation: zero where the board does not
// exist, else a number that a board deleted and made again under the same
// name does not keep, so that a live view's owner tells the views of the
// deleted board from those of the new one (FeedBatch.Deleted). Of one
// board name it only grows, across the States of a tenant too (a
// snapshot's decoded board reads another Gen than the replayed one, never
// a later board's): see boardState.gen. O(1).
func (v Window) Gen() uint64 { return v.gen }

// Name returns the external id of member handle h. O(1).
func (v Window) Name(h uint32) (string, bool) { return v.ix.Label(h) }

// Profile returns member handle h's public profile, zero where it has
// none. O(1).
func (v Window) Profile(h uint32) Profile { return profileOf(v.final, v.profiles, h) }

// UnderReview reports whether member handle h has a submission in the
// board's quarantine. O(1).
func (v Window) UnderReview(h uint32) bool { return v.q != nil && v.q.underReview(h) }

// Resolve returns the member handle an id or alias names. O(1).
func (v Window) Resolve(id string) (uint32, bool) { return v.ix.Resolve(id) }

// Pending returns a copy of the changes applied to the board-window since
// the feed last took them, oldest first. O(pending).
func (v Window) Pending() []FeedChange {
	if v.log == nil {
		return nil
	}
	return v.log.peek(v.fk)
}
