package client

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rankwire/rankwire/wire"
)

// DefaultReadTimeout is how long a Watch waits for anything from its
// gateway (a message, or the pong to its own ping) before it moves to the
// next gateway (WatchReadTimeout).
const DefaultReadTimeout = 5 * time.Second

// errSilent: nothing arrived within the read timeout; the gateway is
// paused, partitioned or gone without a close.
var errSilent = errors.New("client: the gateway went silent")

// liveness ends a connection from which nothing has arrived for bound: no
// message and no pong to the pings it sends three times per bound, so that
// a quiet view on a healthy gateway stays while a paused or partitioned
// one is left within bound. The gateway's own pings (every 30 s) are far
// too rare for that, and a client cannot see them. Every frame counts, of
// whatever type: a later gateway's heartbeat keeps a connection alive
// without a change here.
type liveness struct {
	bound time.Duration
	timer *time.Timer
	mu    sync.Mutex // guards held and the timer's Reset against it
	held  bool       // the caller holds a state: nothing is read, no deadline runs
	stop  context.CancelFunc
	wg    sync.WaitGroup
}

// watchLiveness starts watching conn and returns the context its reads
// must use: it is cancelled with errSilent when conn goes silent, which
// closes conn. A bound of 0 or less watches nothing.
func watchLiveness(ctx context.Context, conn *Conn, bound time.Duration) (context.Context, *liveness) {
	ctx, cancel := context.WithCancelCause(ctx)
	l := &liveness{bound: bound, stop: func() { cancel(nil) }}
	if bound <= 0 {
		return ctx, l
	}
	l.timer = time.AfterFunc(bound, func() { cancel(errSilent) })
	l.wg.Go(func() { l.ping(ctx, conn) })
	return ctx, l
}

// ping pings conn every bound/3 until ctx ends; each pong is a sign of life.
func (l *liveness) ping(ctx context.Context, conn *Conn) {
	t := time.NewTicker(l.bound / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, l.bound)
		err := conn.Ping(pctx)
		cancel()
		if err == nil {
			l.alive()
		}
	}
}

// alive moves the deadline to bound from now, unless held.
func (l *liveness) alive() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer != nil && !l.held {
		l.timer.Reset(l.bound)
	}
}

// hold stops the deadline while the caller handles a state: the
// connection is not read meanwhile, so not even a pong could arrive. The
// matching release starts it again.
func (l *liveness) hold() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = true
	if l.timer != nil {
		l.timer.Stop()
	}
}

// release ends a hold: the deadline is bound from now.
func (l *liveness) release() {
	l.mu.Lock()
	l.held = false
	l.mu.Unlock()
	l.alive()
}

// close stops the watching and waits for its pinger.
func (l *liveness) close() {
	if l.timer != nil {
		l.timer.Stop()
	}
	l.stop()
	l.wg.Wait()
}

// Heartbeats: a gateway says on every connection how it stands for the
// tenant (PROTOCOL.md, "Heartbeats"). Watch leaves a gateway that says it
// is stale (its replica trails past its bound, or it was paused) at once,
// and one that says it cannot take the tenant's writes unless every
// gateway of the list has just said so (a cluster without a majority:
// moving on would only go round). With one gateway there is nowhere to go.

var (
	// errStale: the gateway's heartbeat said its state is stale.
	errStale = errors.New("client: the gateway says it is stale")
	// errUnwritable: the gateway's heartbeat said it cannot take writes.
	errUnwritable = errors.New("client: the gateway says it cannot take writes")
)

// judge returns why Watch leaves the gateway that sent heartbeat m, or nil
// to stay.
func (w *watch) judge(m wire.ServerMessage) error {
	if len(w.c.urls) < 2 {
		return nil
	}
	switch {
	case m.Stale:
		return errStale
	case !m.Writable && w.unwritable < len(w.c.urls):
		return errUnwritable
	case m.Writable:
		w.unwritable = 0
	}
	return nil
}

// countUnwritable counts a session that ended on errUnwritable. Any other
// end (a stale gateway, a dropped or refused connection, a read timeout)
// leaves the count as it is: only a heartbeat saying writable true starts
// it again (judge). A gateway that is down says nothing about writes, so
// it must not reset the round: in a cluster without a majority, one node
// down and the others unwritable, a reset there would have Watch go round
// for ever. The browser's RankwireClient keeps the same rule
// (web/static/client.js, _onHeartbeat).
func (w *watch) countUnwritable(err error) {
	if errors.Is(err, errUnwritable) {
		w.unwritable++
	}
}
