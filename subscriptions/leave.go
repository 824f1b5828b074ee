package subscriptions

import "sync/atomic"

// Leaving many subscriptions at once (a lobby's mass disconnect: a network
// blip, a front end's deploy) must not park thousands of goroutines on one
// board-window's lock. Each Unsubscribe of such a crowd takes the same lock,
// and once goroutines queue on a Go mutex every unlock hands it to the next
// sleeper, so the crowd leaves at the pace of the scheduler's wake-ups, one
// at a time, while the node's other work (its Raft heartbeats) waits for a
// processor. A trace of one gateway closing 15,000 connections showed about
// a thousand goroutines at a time queued on Unsubscribe's lock.
//
// Leave instead pushes its connection's subscriptions on a lock-free stack
// and waits. The first leaver to find no drainer at work becomes the
// drainer: it takes the whole stack at once, groups it by board-window,
// removes each group under one acquisition of its lock, wakes the waiters
// (their channels close together, so they run in parallel, not in a
// chain) and looks again, until the stack is empty. No goroutine of the
// Engine's own: the drainer is a leaver, so that when every leaver has
// returned, every subscription pushed is gone.
//
// That the stack is never left with nobody to drain it: a leaver stores its
// item (the push) and then swaps the draining flag; the drainer stores the
// flag false and then loads the stack. Go's atomics are sequentially
// consistent, so of the two at least one sees the other's store: either
// the leaver becomes the drainer, or the drainer sees the item and goes on.

// leaveItem is one Leave call waiting on the stack.
type leaveItem struct {
	subs []*Sub
	done chan struct{} // closed once subs are gone
	next *leaveItem
}

// leaveQueue is the Engine's stack of subscriptions waiting to leave.
type leaveQueue struct {
	head     atomic.Pointer[leaveItem]
	draining atomic.Bool
}

// Leave ends every subscription of subs, as Unsubscribe does each, and
// returns once they are all gone (their pending messages dropped, the
// counts in Stats exact). Many Leave calls at once cost one acquisition of
// each board-window's lock per batch, not one per subscription; see
// leave.go. The caller may hold the locks that come before Engine.mu in
// the package doc's order, never a board-window's or an Outbox's. Safe for
// concurrent use, and with a Sub already ended.
func (e *Engine) Leave(subs []*Sub) {
	if len(subs) == 0 {
		return
	}
	it := &leaveItem{subs: subs, done: make(chan struct{})}
	for {
		it.next = e.leaving.head.Load()
		if e.leaving.head.CompareAndSwap(it.next, it) {
			break
		}
	}
	e.drainLeaves()
	<-it.done
}

// drainLeaves removes what the stack holds, batch after batch, unless
// another caller drains it already.
func (e *Engine) drainLeaves() {
	q := &e.leaving
	for q.draining.CompareAndSwap(false, true) {
		for batch := q.head.Swap(nil); batch != nil; batch = q.head.Swap(nil) {
			e.leaveBatch(batch)
		}
		q.draining.Store(false)
		if q.head.Load() == nil {
			return // a push after this load finds draining false and drains itself
		}
	}
}

// leaveBatch ends the subscriptions of a stack of items, each board-window
// under one acquisition of its lock, then wakes the items' callers.
func (e *Engine) leaveBatch(batch *leaveItem) {
	groups := map[*windowState][]*Sub{}
	for it := batch; it != nil; it = it.next {
		for _, s := range it.subs {
			groups[s.v.ws] = append(groups[s.v.ws], s)
		}
	}
	for ws, subs := range groups {
		ws.mu.Lock()
		for _, s := range subs {
			e.unsubscribeLocked(s)
		}
		ws.mu.Unlock()
	}
	for it := batch; it != nil; {
		next := it.next
		close(it.done)
		it = next
	}
}
