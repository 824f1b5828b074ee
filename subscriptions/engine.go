package subscriptions

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Key names one board-window: the owner's tenant, board and window (any
// string that names the window's instance, such as "all" or "week:2026-01-05").
type Key struct{ Tenant, Board, Window string }

// Config tunes an Engine. The zero Config works.
type Config struct {
	// RingSize is how many recent changes each watched board-window keeps
	// for `since` resume. Zero means DefaultRingSize.
	RingSize int
	// IdleFor is how long a board-window's ring outlives its last watcher,
	// so that a client that reconnects can resume. Zero means a minute. It
	// is a time, not a number of Flushes: the feed flushes as soon as it is
	// idle, so Flushes come as often as changes do, up to hundreds a second.
	IdleFor time.Duration
}

// evictEvery is the least time between two looks for idle board-windows:
// the look costs O(watched board-windows), and Flushes may come every
// millisecond.
const evictEvery = time.Second

// Engine holds every live view: per board-window, the distinct views with
// their watchers, the indexes that find the views a change touched, and the
// ring of recent changes. Each board-window has a lock of its own, so that
// a subscription waits only for its own board-window's work, never for a
// whole tick, and Flush works on several board-windows (of any tenants) at
// once. Safe for concurrent use; see the package doc for the lock order and
// the Apply/Flush contract.
type Engine struct {
	cfg       Config
	coalesced atomic.Uint64  // pending messages replaced by newer ones
	evicted   time.Time      // the last look for idle board-windows; Flush's caller only
	flushing  []*windowState // Flush's list of board-windows, kept for the next; Flush's caller only
	views     atomic.Int64
	held      atomic.Int64 // subscriptions held for a resume from the future: hold.go
	subs      [len(kindNames)]atomic.Int64
	leaving   leaveQueue // subscriptions of closing connections: see leave.go

	mu      sync.RWMutex // guards the map only; taken before a windowState's mu
	windows map[Key]*windowState
}

// NewEngine returns an empty Engine.
func NewEngine(cfg Config) *Engine {
	if cfg.RingSize <= 0 {
		cfg.RingSize = DefaultRingSize
	}
	if cfg.IdleFor <= 0 {
		cfg.IdleFor = time.Minute
	}
	return &Engine{cfg: cfg, windows: make(map[Key]*windowState)}
}

// windowState is one watched board-window. Its mu guards it, its views
// and their watchers' Sub.seq.
type windowState struct {
	mu      sync.Mutex
	gone    bool    // evicted from Engine.windows: a caller holding it looks again
	changed []*view // views with a diff since the last Flush
	key     Key
	views   map[string]*view
	ranks   rankIndex // positional views (top, rank, around) by their spans
	shifts  rankIndex // members views by their spans: see spansOf
	handles multiIndex[uint32]
	names   multiIndex[string]
	ring    *ring
	at      uint64    // the board-window's seq when the engine last saw it (created, Apply)
	gen     uint64    // the board's generation when the engine last saw it (created, Apply): of ring and at
	held    []hold    // subscriptions whose first message waits for at to reach their since: hold.go
	idle    time.Time // when the last view went; zero while watched
	scratch dirtyScratch
}

// view is one distinct view: a spec over a board-window, its state at seq,
// and its watchers. Its windowState's mu guards it.
type view struct {
	ws    *windowState
	key   string
	spec  Spec
	st    state
	seq   uint64
	total int
	gen   uint64 // the board's generation (Window.Gen), part of key: every watcher's (EndBoard)
	// watchers in the order they subscribed (Unsubscribe moves the last
	// into the gap: Sub.widx): a slice, not a set, so that a tick offers in
	// that order, which is mostly the order of the connections' memory, and
	// the processor's prefetcher runs ahead of the offers at ten thousand
	// watchers instead of every offer missing the cache at a random place.
	watchers []*Sub
	tick     *body              // the diff since the last Flush, or nil
	full     bool               // the view changed twice before one Flush: send snapshots
	snap     *shared            // cached snapshot at seq, or nil
	catches  map[uint64]*shared // catch-up diffs to seq by their since (nil: refused); see catchUp
	catchAt  uint64             // the seq catches lead to
}

// Stats are the Engine's gauges and counters, for metrics.
type Stats struct {
	Views         int          // distinct views
	Subscriptions map[Kind]int // subscriptions by kind
	Held          int          // subscriptions whose resume waits for this gateway to apply their since
	Coalesced     uint64       // pending messages replaced by newer ones
}

// Stats returns the current gauges and counters. O(kinds).
func (e *Engine) Stats() Stats {
	st := Stats{Views: int(e.views.Load()), Subscriptions: map[Kind]int{}, Coalesced: e.coalesced.Load(), Held: int(e.held.Load())}
	for _, k := range Kinds {
		st.Subscriptions[k] = int(e.subs[k].Load())
	}
	return st
}

// Subscribe starts a subscription named id of out to spec's view of the
// board-window key, which w reads; the caller holds the board's read lock.
// The first message is put in out at once: a diff from since where the ring
// still reaches it, else a snapshot; but where since is past the
// board-window's seq as the engine last saw it (a resume from a gateway
// ahead of this one), the subscription is held until an Apply reaches
// since (hold.go: Ready, Abandon). A view that others watch is shared;
// a new one is computed from w: O(log N + rows). The caller checks the
// spec's limits and the id's uniqueness on the connection.
func (e *Engine) Subscribe(key Key, w Window, out *Outbox, id string, spec Spec, since *uint64) (*Sub, error) {
	if spec.Kind < Top || spec.Kind > Members {
		return nil, fmt.Errorf("%w: %d", ErrBadSpec, spec.Kind)
	}
	spec = spec.normalize()
	ws := e.lockWindow(key, w)
	defer ws.mu.Unlock()
	v := e.viewFor(ws, w, spec)
	s := newSub(id, spec.Kind, v, out)
	s.widx = len(v.watchers)
	v.watchers = append(v.watchers, s)
	e.subs[spec.Kind].Add(1)
	if w.Gen() != ws.gen {
		// A board deleted and made again within one tick, before that
		// tick's Apply: ws.ring and ws.at are still the deleted board's,
		// whose seqs are another board's. A since compared with them would
		// get a diff mixing the old board's changes with the new one's, or
		// a snapshot labelled with a seq the new board has not reached: a
		// fresh snapshot of the new board is the only right answer.
		since = nil
	}
	first := v.opening(since, w, ws.at) // encoded once: a reconnect that resumes wastes no snapshot
	if first == nil {
		ws.holdLocked(e, s, *since)
		return s, nil
	}
	out.put(s, first)
	s.seq = first.seq
	return s, nil
}

// lockWindow returns key's window state, created where missing, with its
// lock held. A state evicted between the lookup and the lock is looked up
// again.
func (e *Engine) lockWindow(key Key, w Window) *windowState {
	for {
		e.mu.RLock()
		ws := e.windows[key]
		e.mu.RUnlock()
		if ws == nil {
			e.mu.Lock()
			if ws = e.windows[key]; ws == nil {
				ws = &windowState{key: key, views: map[string]*view{}, ranks: rankIndex{}, shifts: rankIndex{},
					handles: multiIndex[uint32]{}, names: multiIndex[string]{}, ring: newRing(e.cfg.RingSize, w.Seq()), at: w.Seq(), gen: w.Gen()}
				e.windows[key] = ws
			}
			e.mu.Unlock()
		}
		ws.mu.Lock()
		if !ws.gone {
			return ws
		}
		ws.mu.Unlock()
	}
}

// viewFor returns the view of spec over ws, which the caller has locked,
// creating it as needed.
func (e *Engine) viewFor(ws *windowState, w Window, spec Spec) *view {
	ws.idle = time.Time{}
	gen := w.Gen()
	k := viewKey(spec, gen)
	if v := ws.views[k]; v != nil {
		return v
	}
	v := &view{ws: ws, key: k, spec: spec, st: compute(spec, w), seq: w.Seq(), total: boardLen(w), gen: gen}
	ws.views[k] = v
	ws.index(v)
	e.views.Add(1)
	return v
}

// Unsubscribe ends s and drops its pending message. The view goes with its
// last watcher. O(view's index entries). Safe to call more than once.
func (e *Engine) Unsubscribe(s *Sub) {
	ws := s.v.ws
	ws.mu.Lock()
	defer ws.mu.Unlock()
	e.unsubscribeLocked(s)
}

// unsubscribeLocked is Unsubscribe with s's board-window's lock held.
func (e *Engine) unsubscribeLocked(s *Sub) {
	if e.detachLocked(s) {
		s.out.drop(s)
	}
}

// detachLocked takes s out of its view, its hold and the counts, and
// reports whether it was there; its outbox is the caller's to drop (or
// end: gone.go). s's board-window's lock is held.
func (e *Engine) detachLocked(s *Sub) bool {
	v := s.v
	ws := v.ws
	i := s.widx
	if i < 0 || i >= len(v.watchers) || v.watchers[i] != s {
		return false
	}
	last := len(v.watchers) - 1
	v.watchers[i] = v.watchers[last]
	v.watchers[i].widx = i
	v.watchers[last] = nil
	v.watchers = v.watchers[:last]
	if cap(v.watchers) > 64 && len(v.watchers) < cap(v.watchers)/4 { // a crowd that left keeps no array
		v.watchers = slices.Clip(slices.Clone(v.watchers))
	}
	s.widx = -1
	ws.unholdLocked(e, s)
	e.subs[s.kind].Add(-1)
	if len(v.watchers) > 0 {
		return true
	}
	ws.unindex(v)
	delete(ws.views, v.key)
	e.views.Add(-1)
	if len(ws.views) == 0 {
		ws.idle = time.Now()
	}
	return true
}

// Apply takes one tick's changes of the board-window key, oldest first,
// which w reads; the caller holds the board's read lock. reset says the
// board-window was replaced or emptied wholesale: every view is recomputed
// and the ring forgets; where it was deleted, its held subscriptions end
// their wait (hold.go). Each dirty distinct view is recomputed once; its
// diff waits for Flush. Cost: O(changes + views touched × their rows).
// Call it from the ticker goroutine only, at most once per key between
// Flushes.
func (e *Engine) Apply(key Key, w Window, changes []Change, reset bool) {
	e.mu.RLock()
	ws := e.windows[key]
	e.mu.RUnlock()
	if ws == nil {
		return
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.gone {
		return
	}
	dirty := ws.scratch.views[:0]
	if reset {
		ws.ring.reset(w.Seq())
		for _, v := range ws.views {
			dirty = append(dirty, v)
		}
	} else {
		for _, c := range changes {
			ws.ring.push(c)
		}
		dirty = ws.dirty(changes, w, dirty)
	}
	e.recomputeAll(dirty, w)
	clear(dirty) // the views may go before the next Apply: keep no pointer
	ws.scratch.views = dirty[:0]
	// hold.go: the board-window was deleted (and maybe made again: its
	// generation tells, whatever seq the new board reached in the tick).
	gone := reset && (w.Board() == nil || w.Gen() != ws.gen || w.Seq() < ws.at)
	ws.at, ws.gen = w.Seq(), w.Gen()
	if gone {
		ws.goneLocked(e)
	}
	ws.releaseLocked(e, w)
}

// parallelViews is the fewest dirty views of one board-window worth
// reading on several goroutines: below it, starting them costs more than
// it saves.
const parallelViews = 256

// recomputeAll reads every view of vs again and keeps each diff for Flush.
// The reads (compute: the board and identities only, under the caller's
// read lock of the board) run on up to GOMAXPROCS goroutines where there
// are many, so that one hot board-window's tick uses every core; folding
// each result into the board-window's indexes stays on this goroutine.
func (e *Engine) recomputeAll(vs []*view, w Window) {
	states := make([]state, len(vs))
	workers := min(runtime.GOMAXPROCS(0), len(vs)/parallelViews)
	if workers < 2 {
		for i, v := range vs {
			states[i] = compute(v.spec, w)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < int64(len(vs)); i = next.Add(1) - 1 {
					states[i] = compute(vs[i].spec, w)
				}
			})
		}
		wg.Wait()
	}
	for i, v := range vs {
		e.recompute(v, states[i], w)
	}
}

// recompute takes st, v read again, and keeps the diff for Flush where it
// changed. A change of total alone is no change of the view: it sends
// nothing.
func (e *Engine) recompute(v *view, st state, w Window) {
	put, gone := diffRows(v.st.rows, st.rows)
	v.ws.reindex(v, st)
	v.st = st
	if len(put) == 0 && len(gone) == 0 {
		return
	}
	if v.tick != nil {
		v.full = true
	} else {
		v.ws.changed = append(v.ws.changed, v)
	}
	v.tick = &body{diff: true, prev: v.seq, seq: w.Seq(), total: boardLen(w), rows: put, gone: gone}
	v.seq, v.total, v.snap = w.Seq(), boardLen(w), nil
}

// Flush encodes each changed view's diff once and offers the shared bytes
// to every watcher's outbox: a watcher whose last message is the diff's prev
// and has nothing pending gets the diff, any other one a snapshot (shared
// too). Board-windows are flushed on up to GOMAXPROCS goroutines at once,
// each under its own lock only. Never blocks on a client. Cost: O(watched
// board-windows + changed views × rows + their watchers). Call it from the
// ticker goroutine, without the board's lock.
func (e *Engine) Flush() {
	e.mu.RLock()
	all := e.flushing[:0]
	for _, ws := range e.windows {
		all = append(all, ws)
	}
	e.mu.RUnlock()
	defer func() { clear(all); e.flushing = all[:0] }() // an evicted window is not kept
	var next atomic.Int64
	work := func() {
		for i := next.Add(1) - 1; i < int64(len(all)); i = next.Add(1) - 1 {
			e.flushWindow(all[i])
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(all)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if now := time.Now(); now.Sub(e.evicted) >= evictEvery {
		e.evicted = now
		e.evictIdle(now)
	}
}

// flushWindow offers ws's changed views to their watchers.
func (e *Engine) flushWindow(ws *windowState) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for i, v := range ws.changed {
		ws.changed[i] = nil
		var d *shared
		if !v.full && len(v.watchers) > 0 {
			d = &shared{typ: "diff", body: appendBody(make([]byte, 0, bodySize(*v.tick)), *v.tick), seq: v.tick.seq, prev: v.tick.prev}
		}
		v.tick, v.full = nil, false
		for _, s := range v.watchers {
			e.deliver(v, s, d)
		}
	}
	ws.changed = ws.changed[:0]
}

func (e *Engine) deliver(v *view, s *Sub, d *shared) {
	if s.seq >= v.seq {
		return
	}
	if s.out.offer(s, d, v) {
		e.coalesced.Add(1)
	}
	s.seq = v.seq
}

// evictIdle drops the board-windows nobody has watched for IdleFor.
// O(watched board-windows).
func (e *Engine) evictIdle(now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, ws := range e.windows {
		ws.mu.Lock()
		if !ws.idle.IsZero() && now.Sub(ws.idle) >= e.cfg.IdleFor {
			ws.gone = true
			delete(e.windows, k)
		}
		ws.mu.Unlock()
	}
}

// snapshot returns v's snapshot at its seq, encoded once and cached.
func (v *view) snapshot() *shared {
	if v.snap == nil {
		v.snap = v.encodeSnapshot()
	}
	return v.snap
}

// firstSnapshot is the snapshot a new watcher starts from: the cached one
// where the view has one or other watchers (who may need it again), else
// encoded without caching it. A per-player view (around, friends) has one
// watcher, so its snapshot is held only until written, not for as long as
// the view stands still (~0.7 KiB a view: docs/BENCHMARKS.md, "Memory per
// connection"); a later need encodes it again, as after any change.
func (v *view) firstSnapshot() *shared {
	if v.snap != nil || len(v.watchers) > 1 {
		return v.snapshot()
	}
	return v.encodeSnapshot()
}

func (v *view) encodeSnapshot() *shared {
	b := body{seq: v.seq, total: v.total, rows: v.st.rows}
	return &shared{typ: "snapshot", body: appendBody(make([]byte, 0, bodySize(b)), b), seq: v.seq}
}

func boardLen(w Window) int {
	if b := w.Board(); b != nil {
		return b.Len()
	}
	return 0
}
