package live

import (
	"strings"
	"sync"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/subscriptions"
)

// Following subscriptions (PROTOCOL.md, "Following the current window"):
// a subscription with "follow":true to a day, week or month window moves
// to the board's new window at each turnover, and its next message is the
// new window's snapshot, under the same id. Two things move it, both under
// the tenant's read lock, so that the new view starts exactly where the
// window and its change feed stand:
//
//   - the change feed: a batch of a newer window of the board and kind
//     (feed.Apply) moves its followers at once, before anything of that
//     window is flushed to them;
//   - a poll every followEvery (runFollow, owned by the Plane: started with
//     the first connection, stopped by Close) reads the current window of
//     each followed board and kind at the hub's clock (hub.ReadWindow with
//     no time), so that a quiet board's followers move too, at most
//     followEvery late.
//
// The hub decides which window is current (the board's calendar, in the
// ledger); this file only compares window names, which sort by date within
// a kind ("day:2026-03-29" after "day:2026-03-28"), and never moves a view
// back. Lock order: the tenant's read lock, then a liveView's mu, then the
// engine's locks; Plane.followMu is a leaf (nothing is taken under it).

// defaultFollowEvery is how often the poll looks for turnovers.
const defaultFollowEvery = time.Second

// liveView is a connection's subscription as the connection holds it: the
// engine's Sub, which a following subscription replaces at each turnover.
type liveView struct {
	f *followSpec // nil: not following; immutable

	mu     sync.Mutex // guards the fields below
	sub    *subscriptions.Sub
	window string // the name of the window sub watches ("day:2026-03-29")
	ended  bool
	resume *time.Timer // a held resume's bound (resume.go); nil when none
}

// followSpec is what a following subscription needs to join the next
// window: its board and kind, and its subscribe message's id and view.
type followSpec struct {
	key  followKey
	id   string
	spec subscriptions.Spec
	out  *subscriptions.Outbox
}

// followKey is one followed board and window kind of a tenant.
type followKey struct{ tenant, board, kind string }

// follow registers v as following. O(1).
func (p *Plane) follow(v *liveView) {
	p.followMu.Lock()
	defer p.followMu.Unlock()
	set := p.follows[v.f.key]
	if set == nil {
		set = map[*liveView]struct{}{}
		p.follows[v.f.key] = set
	}
	set[v] = struct{}{}
	delete(p.movedTo, v.f.key) // a newcomer's window is its own: the next batch looks at every follower
}

// leave ends v's subscription, once. Safe to call more than once.
func (p *Plane) leave(v *liveView) {
	v.mu.Lock()
	v.ended = true
	v.stopResumeLocked()
	p.eng.Unsubscribe(v.sub)
	v.mu.Unlock()
	p.unfollow(v)
}

// leaveAll ends the subscriptions of vs, of a closing connection, through
// the engine's Leave: a crowd of connections that close at once queues on
// no board-window's lock (subscriptions/leave.go). Once vs are marked
// ended no turnover moves them (move checks ended under v.mu), so the
// Subs collected here are the last they hold. Returns once they are gone.
func (p *Plane) leaveAll(vs []*liveView) {
	subs := make([]*subscriptions.Sub, 0, len(vs))
	for _, v := range vs {
		v.mu.Lock()
		if !v.ended {
			v.ended = true
			subs = append(subs, v.sub)
		}
		v.stopResumeLocked()
		v.mu.Unlock()
		p.unfollow(v)
	}
	p.eng.Leave(subs)
}

// unfollow forgets v as following, if it was.
func (p *Plane) unfollow(v *liveView) {
	if v.f == nil {
		return
	}
	p.followMu.Lock()
	defer p.followMu.Unlock()
	if set := p.follows[v.f.key]; set != nil {
		delete(set, v)
		if len(set) == 0 {
			delete(p.follows, v.f.key)
			delete(p.movedTo, v.f.key)
		}
	}
}

// followers returns the views following k. O(their number).
func (p *Plane) followers(k followKey) []*liveView {
	p.followMu.Lock()
	defer p.followMu.Unlock()
	out := make([]*liveView, 0, len(p.follows[k]))
	for v := range p.follows[k] {
		out = append(out, v)
	}
	return out
}

// followBatch moves the followers of a feed batch's board and kind to its
// window where it is newer than theirs. The caller (feed.Apply) holds the
// tenant's read lock, and w reads the window.
func (p *Plane) followBatch(tenant, board, window string, w hub.Window) {
	kind, _, ok := strings.Cut(window, ":")
	if !ok {
		return // the all window never turns over
	}
	k := followKey{tenant, board, kind}
	p.followMu.Lock()
	_, followed := p.follows[k]
	done := !followed || p.movedTo[k] >= window
	if !done {
		p.movedTo[k] = window
	}
	p.followMu.Unlock()
	if done {
		return // nobody follows it, or every follower is at window or past it
	}
	p.moveAll(p.followers(k), window, w)
}

// moveAll moves each of vs to window name, which w reads, where it is newer
// than the view's. The caller holds the tenant's read lock.
func (p *Plane) moveAll(vs []*liveView, name string, w hub.Window) {
	for _, v := range vs {
		p.move(v, name, w)
	}
}

// move ends v's subscription to its old window and starts one to window
// name, which w reads:
// the old one's pending message is dropped first, so that the new
// window's snapshot is the next message of the id.
func (p *Plane) move(v *liveView, name string, w hub.Window) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ended || name <= v.window || v.sub.Ended() { // ended: its board was deleted (gone.go)
		return
	}
	p.eng.Unsubscribe(v.sub)
	key := subscriptions.Key{Tenant: v.f.key.tenant, Board: v.f.key.board, Window: name}
	sub, err := p.eng.Subscribe(key, window{w}, v.f.out, v.f.id, v.f.spec, nil)
	if err != nil { // never: the spec was valid when it first joined
		p.log.Error("follow: cannot join the next window", "board", key.Board, "window", name, "err", err)
		v.ended = true
		return
	}
	v.sub, v.window = sub, name
}

// rollover moves every follower whose board turned over by the hub's
// clock: one read of the current window per followed board and kind.
// O(followed boards + followers that move).
func (p *Plane) rollover() {
	p.followMu.Lock()
	keys := make([]followKey, 0, len(p.follows))
	for k := range p.follows {
		keys = append(keys, k)
	}
	p.followMu.Unlock()
	for _, k := range keys {
		l := hub.Loc{Tenant: k.tenant, Board: k.board, Window: k.kind}
		_ = p.hub.ReadWindow(l, func(w hub.Window) error { // a board gone: its followers had a reset
			p.moveAll(p.followers(k), w.Key(), w)
			return nil
		})
	}
}

// startFollow starts the poll goroutine unless it runs. p.mu held
// (track), as startBeats.
func (p *Plane) startFollow() {
	if p.followStop != nil || p.followEvery <= 0 {
		return
	}
	p.followStop, p.followDone = make(chan struct{}), make(chan struct{})
	go p.runFollow(p.followStop, p.followDone)
}

// stopFollow stops the poll goroutine, if it runs, and waits for it.
func (p *Plane) stopFollow() {
	p.mu.Lock()
	stop, done := p.followStop, p.followDone
	p.followStop = nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// runFollow calls rollover every followEvery until stop is closed.
func (p *Plane) runFollow(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(p.followEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.rollover()
		}
	}
}
