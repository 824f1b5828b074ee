package live

import (
	"context"
	"fmt"
	"time"

	"github.com/rankwire/rankwire/wire"
)

// DefaultResumeWait is Options.ResumeWait's zero value: how long a resume
// from the future waits for this gateway's apply. Within the client's
// heartbeat timeout (3 intervals, 6 s) and short of issue 25's 5 s for a
// watcher's move, so that a client that must move still has the time to.
const DefaultResumeWait = 2 * time.Second

// A subscription that resumes with since past what this gateway has
// applied of its board-window (the client left a gateway that was ahead)
// is held by the engine (subscriptions/hold.go): nothing is sent until the
// gateway's apply reaches since, then a diff from since (or a snapshot at
// a seq of at least since), never this gateway's older state. The wait is
// bounded by Options.ResumeWait; past it the subscription ends with an
// unavailable error naming since, so that the client resumes through
// another gateway; where its board-window is deleted meanwhile, the
// engine ends the hold at once and the subscription goes on as any of that
// board's (hold.go, goneLocked), so the bound finds nothing held. No lock
// and no goroutine waits meanwhile: on a WebSocket a timer (stopped when
// the view ends) checks the hold once the bound passes; an event stream
// waits before its response starts, on its request's context, which ends
// when the client goes.

// behindError is the error of a resume whose bound passed.
func behindError(since uint64, wait time.Duration) *Error {
	return &Error{wire.CodeUnavailable, fmt.Sprintf(
		"since: this gateway has not applied the board-window up to seq %d within %s; resume through another gateway", since, wait)}
}

// armResume bounds the hold of v, id's view just joined with since, where
// the engine holds it: when the bound passes and v is still held, v ends
// and the client gets behindError. O(1); the timer is v's (leave stops it).
func (c *wsConn) armResume(id string, v *liveView, since *uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if c.p.heldLocked(v, since) == nil {
		return
	}
	at := *since
	v.resume = time.AfterFunc(c.p.resumeTO, func() { c.resumeTimedOut(id, v, at) })
}

// heldLocked returns the channel closed once the engine no longer holds v,
// joined with since, or nil where it holds nothing: no since, v ended, or
// v follows (join dropped since, and a move replaces v.sub under v.mu, so
// v.sub is read only here, under it). v.mu is held.
func (p *Plane) heldLocked(v *liveView, since *uint64) <-chan struct{} {
	if since == nil || v.ended || v.f != nil {
		return nil
	}
	ready := p.eng.Ready(v.sub)
	select {
	case <-ready:
		return nil
	default:
		return ready
	}
}

// resumeTimedOut ends v where the engine still holds it, and tells the
// client where id still names v; where v got its first message
// meanwhile, or ended, it does nothing. Runs on v's timer.
func (c *wsConn) resumeTimedOut(id string, v *liveView, since uint64) {
	if !c.p.abandon(v) {
		return
	}
	c.mu.Lock()
	i := c.subs.find(id)
	held := i >= 0 && c.subs[i].view == v
	if held {
		c.subs.remove(id)
	}
	c.mu.Unlock()
	c.p.metrics.resumeGaveUp.Inc()
	if held { // else the client unsubscribed id meanwhile, and may reuse it: no error of v's for its next subscription
		c.reply(id, behindError(since, c.p.resumeTO))
	}
}

// awaitResume waits, on an event stream's request, until the engine no
// longer holds v (joined with since), the bound passes or ctx ends; it
// answers behindError where the bound passed with v still held (v then
// ended), unavailable where the client went (v is left to the caller).
func (p *Plane) awaitResume(ctx context.Context, v *liveView, since *uint64) error {
	v.mu.Lock()
	ready := p.heldLocked(v, since)
	v.mu.Unlock()
	if ready == nil {
		return nil
	}
	t := time.NewTimer(p.resumeTO)
	defer t.Stop()
	select {
	case <-ready:
		return nil
	case <-ctx.Done(): // the client went: nobody reads the answer, nothing to log
		return &Error{wire.CodeUnavailable, "since: the request ended while this gateway caught up"}
	case <-t.C:
	}
	if !p.abandon(v) {
		return nil // its first message came as the bound passed
	}
	p.metrics.resumeGaveUp.Inc()
	return behindError(*since, p.resumeTO)
}

// abandon ends v where the engine still holds it, and reports whether it
// did; where v got its first message meanwhile, or ended, it does nothing.
func (p *Plane) abandon(v *liveView) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ended || !p.eng.Abandon(v.sub) {
		return false
	}
	v.ended = true
	return true
}

// stopResumeLocked stops v's resume timer, if armed: v ends. v.mu is held.
func (v *liveView) stopResumeLocked() {
	if v.resume != nil {
		v.resume.Stop()
		v.resume = nil
	}
}
