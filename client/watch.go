package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/rankwire/rankwire/wire"
)

// View is a live view's spec; see Top, Around, AtRank and Members.
type View = wire.View

// Top is the view of the top n rows.
func Top(n int) View { return View{Kind: wire.KindTop, Limit: &n} }

// Around is the view of radius rows above and below member (radius 0:
// the member's row alone).
func Around(member string, radius int) View {
	return View{Kind: wire.KindAround, Member: member, Radius: &radius}
}

// AtRank is the view of one rank (a prize line).
func AtRank(rank int) View { return View{Kind: wire.KindRank, Rank: rank} }

// Members is the view of some members' rows (friends).
func Members(ids ...string) View { return View{Kind: wire.KindMembers, Members: ids} }

// ViewState is a live view as of Seq: its rows in rank order and the
// board-window's size, and how Watch got to it (Snapshot, Prev, Resumed),
// so that a caller can count its chain without reading the protocol.
type ViewState struct {
	Seq   uint64
	Total int
	Rows  []Row
	// Snapshot: the state came whole from a snapshot that replaced the one
	// held (the first state, a resume the gateway answered with a
	// snapshot, or a gateway's coalesced push), or from diffs applied to
	// such a snapshot that Watch held back because it was older than the
	// state yielded before (a gateway that had applied less); else it is
	// a diff applied to the state yielded before.
	Snapshot bool
	// Prev is a diff's prev: the Seq of the state it was applied to,
	// which Watch checked is the Seq it yielded before (0 for a snapshot).
	Prev uint64
	// Resumed: the first state yielded on a connection after the first
	// (Watch reconnected and resumed with since, or re-subscribed a
	// following view); with Snapshot false the resume continued the chain.
	Resumed bool
}

// WatchOption tunes Watch.
type WatchOption func(*watch)

// WatchWindow watches a window other than all (day, week, month).
func WatchWindow(kind string) WatchOption { return func(w *watch) { w.window = kind } }

// WatchFollow follows the current window of WatchWindow's kind across
// turnovers (Conn.Follow): at the board's local midnight Watch yields the
// new window's state, whose Seq starts over. A following view does not
// resume with since: after a reconnect the first state is a snapshot of
// the window then current, yielded even where it equals the last one.
func WatchFollow() WatchOption { return func(w *watch) { w.follow = true } }

// WatchBackoff sets the reconnect backoff: a random wait below
// min(max, base·2^n) before the n-th retry in a row. The default is 250 ms
// doubling to 8 s.
func WatchBackoff(base, max time.Duration) WatchOption {
	return func(w *watch) { w.base, w.max = base, max }
}

// WatchReadTimeout sets how long Watch waits for anything from its gateway
// (a message, or the pong to the ping it sends three times per d) before it
// closes the connection and resumes on the next gateway; it also bounds
// the dial. Zero keeps DefaultReadTimeout; negative waits for ever (a dial
// then waits up to 10 s).
func WatchReadTimeout(d time.Duration) WatchOption {
	return func(w *watch) {
		if d != 0 {
			w.readTimeout = d
		}
	}
}

type watch struct {
	c           *Client
	board       string
	view        View
	window      string
	follow      bool
	base, max   time.Duration
	readTimeout time.Duration
	// unwritable counts the sessions that ended on a heartbeat saying
	// writable false since the last heartbeat saying true (other ends
	// leave it alone): once every gateway has said so, Watch stays where
	// it is (liveness.go, judge and countUnwritable). Owned by Watch's loop.
	unwritable int
	// shown is the seq of the last state yielded (any: one was). A
	// gateway that applied less than that (it lagged the one Watch left)
	// answers a resume with an older snapshot: Watch keeps it as its base,
	// applies the diffs that follow on it, and yields nothing until the
	// base passes shown (rebased: the next state yielded says Snapshot).
	// Not for a following view, whose seq starts over at a turnover.
	// Owned by Watch's loop.
	shown   uint64
	any     bool
	rebased bool
}

// Watch follows a live view of board. It yields the view's state after
// every change (the first yield is its current state), until ctx ends,
// the loop stops, or an error that no retry can mend: a refused view
// (an *Error with code not_found, forbidden or bad_request) or a refused
// token or origin (close 4003), which it yields once before it ends.
// When a connection drops, nothing arrives on it within the read
// timeout (WatchReadTimeout: a paused or partitioned gateway), or the
// gateway's heartbeat says it is stale or cannot take the tenant's writes
// (PROTOCOL.md, "Heartbeats"), it reconnects to the next gateway of the
// Client's list and resumes with since: the states it yields follow one another without a gap (a diff
// from the last seq it yielded, or a snapshot where the gateway no longer
// has the changes since), whichever gateway serves them, and never go
// back: a gateway that applied less than the seq held waits (bounded) until
// it has, then answers with a diff from it, or answers unavailable, on which
// Watch moves on; one older than that rule answers with the older snapshot
// it has, which Watch keeps as its base without yielding it (nor the diffs
// on it) until the view passes the seq it yielded (a following view
// excepted: its seq starts over at a turnover). A token that
// expired (close 4001) is asked for again (WithTokenFunc).
func (c *Client) Watch(ctx context.Context, board string, v View, opts ...WatchOption) iter.Seq2[ViewState, error] {
	w := &watch{c: c, board: board, view: v, base: 250 * time.Millisecond, max: 8 * time.Second, readTimeout: DefaultReadTimeout}
	for _, o := range opts {
		o(w)
	}
	return func(yield func(ViewState, error) bool) {
		var st *state
		failed := 0
		for n := int(c.next.Load()); ; n++ {
			url := c.urls[n%len(c.urls)]
			next, err := w.session(ctx, url, st, yield)
			w.countUnwritable(err)
			switch {
			case errors.Is(err, errStop) || ctx.Err() != nil:
				return
			case err != nil && isFatal(err):
				yield(ViewState{}, err)
				return
			}
			if next != nil && next.seq != stateSeq(st) {
				failed = 0 // it got through: the next try is the first of a new run
			}
			st = next
			failed++
			wait := time.Duration(rand.Int64N(int64(min(w.max, w.base<<min(failed-1, 20))) + 1))
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}
}

// errStop: the caller stopped the loop.
var errStop = errors.New("client: watch stopped")

// state is a view as the client holds it: rows keyed by rank.
type state struct {
	seq   uint64
	total int
	rows  map[int]Row
}

func stateSeq(st *state) uint64 {
	if st == nil {
		return 0
	}
	return st.seq
}

func (st *state) snapshot() ViewState {
	rows := make([]Row, 0, len(st.rows))
	for _, r := range st.rows {
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b Row) int { return a.Rank - b.Rank })
	return ViewState{Seq: st.seq, Total: st.total, Rows: rows}
}

// closeError is a connection the gateway closed, with its code.
type closeError struct {
	code   websocket.StatusCode
	reason string
}

func (e *closeError) Error() string {
	return fmt.Sprintf("rankwire: connection closed %d: %s", e.code, e.reason)
}

// isFatal reports whether err ends Watch: a refused view or a close code
// after which the protocol says not to reconnect (wire.CloseCode.Final:
// 4003 refused, 1007 or 1009 a message the gateway would not take).
func isFatal(err error) bool {
	var ce *closeError
	if errors.As(err, &ce) {
		return wire.CloseCode(ce.code).Final()
	}
	var e *Error
	return errors.As(err, &e) && fatalCodes[wire.Code(e.Code)]
}

// fatalCodes are the error codes of a refused view: no retry mends them.
var fatalCodes = map[wire.Code]bool{wire.CodeNotFound: true, wire.CodeForbidden: true, wire.CodeBadRequest: true}

// session runs one connection to url: it subscribes (with since where st
// holds a state), applies and yields every message, and returns the state
// it got to and why it ended.
func (w *watch) session(ctx context.Context, base string, st *state, yield func(ViewState, error) bool) (*state, error) {
	dial := 10 * time.Second
	if w.readTimeout > 0 {
		dial = w.readTimeout // a paused gateway takes the connection and never upgrades it
	}
	conn, err := w.c.Dial(ctx, base, DialOptions{Timeout: dial})
	if err != nil {
		return st, err
	}
	defer conn.CloseNow()
	rctx, live := watchLiveness(ctx, conn, w.readTimeout)
	defer live.close()
	if err := w.subscribe(rctx, conn, st); err != nil {
		return st, err
	}
	resumed := st != nil // the next state yielded is this resume's answer
	for {
		raw, err := conn.ReadRaw(rctx)
		if err != nil && errors.Is(context.Cause(rctx), errSilent) {
			return st, errSilent
		}
		if err != nil {
			if code := websocket.CloseStatus(err); code != -1 {
				var reason string
				var ce websocket.CloseError
				if errors.As(err, &ce) {
					reason = ce.Reason
				}
				return st, &closeError{code: code, reason: reason}
			}
			return st, err
		}
		live.alive()
		var m wire.ServerMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			continue // not ours to read: a newer gateway's message
		}
		if m.Type == wire.TypeHeartbeat {
			if err := w.judge(m); err != nil {
				return st, err
			}
			continue
		}
		next, err := apply(st, m, w.follow)
		if err != nil {
			return st, err
		}
		if next == st {
			continue
		}
		st = next
		if w.behind(st) {
			continue
		}
		vs := w.yielded(st, m, resumed)
		resumed = false
		live.hold() // the caller's time over a state is not the gateway's silence
		if !yield(vs, nil) {
			conn.Close("done")
			return st, errStop
		}
		live.release()
	}
}

// subscribe sends the session's subscribe message: a resume from st, or
// a following view's.
func (w *watch) subscribe(ctx context.Context, conn *Conn, st *state) error {
	if w.follow {
		return conn.Follow(ctx, "w", w.board, w.window, w.view)
	}
	return conn.Subscribe(ctx, "w", w.board, w.window, w.view, stateSeq(st))
}

// behind reports whether st is older than, or as old as, a state Watch
// already yielded (a resume a lagging gateway answered with the snapshot
// it had, and the diffs on it until it catches up): held, never yielded,
// so that a caller never sees the view go back. A view's seq counts its
// board-window's changes and only grows (a reset is one more change); a
// following view's starts over at a turnover and is never held.
func (w *watch) behind(st *state) bool {
	if w.follow || !w.any || st.seq > w.shown {
		return false
	}
	w.rebased = true
	return true
}

// yielded is st, which m made, as Watch yields it: with whether m was a
// snapshot, the diff's prev, and whether it answers a resume. After a
// base held back (behind) the state replaces the one yielded rather than
// following it: Snapshot, Prev 0.
func (w *watch) yielded(st *state, m wire.ServerMessage, resumed bool) ViewState {
	vs := st.snapshot()
	vs.Snapshot, vs.Resumed = m.Type == wire.TypeSnapshot || w.rebased, resumed
	if m.Prev != nil && !vs.Snapshot {
		vs.Prev = *m.Prev
	}
	w.shown, w.any, w.rebased = st.seq, true, false
	return vs
}

// errGap: a diff that does not follow the state held; a new connection
// resumes from the state.
var errGap = errors.New("client: a diff out of sequence")

// apply returns the state after m (st itself where m changes nothing), or
// the error m carries. follow: the view follows the current window, whose
// snapshot at a turnover may carry the old window's seq, and is applied.
func apply(st *state, m wire.ServerMessage, follow bool) (*state, error) {
	// A resume from the seq held (since = st.seq) is answered with that
	// same seq, by an empty diff or a snapshot: nothing new to yield, and a
	// caller must never see a seq twice.
	if st != nil && m.Seq == st.seq && (m.Type == wire.TypeDiff || m.Type == wire.TypeSnapshot && !follow) {
		return st, nil
	}
	switch m.Type {
	case wire.TypeError:
		return st, &Error{Status: 0, Code: string(m.Code), Message: m.Message}
	case wire.TypeSnapshot:
		next := &state{seq: m.Seq, total: m.Total, rows: map[int]Row{}}
		for _, r := range m.Rows {
			next.rows[r.Rank] = r
		}
		return next, nil
	case wire.TypeDiff:
		if st == nil || m.Prev == nil || *m.Prev != st.seq {
			return st, errGap
		}
		next := &state{seq: m.Seq, total: m.Total, rows: make(map[int]Row, len(st.rows))}
		for k, r := range st.rows {
			next.rows[k] = r
		}
		for _, g := range m.Gone {
			delete(next.rows, g)
		}
		for _, r := range m.Rows {
			next.rows[r.Rank] = r
		}
		return next, nil
	}
	// board, heartbeats (session judges them first) and types a later
	// gateway sends: nothing for the rows. They kept the connection alive
	// as they arrived (liveness).
	return st, nil
}

// wsURL turns a gateway's base URL into its WebSocket endpoint.
func wsURL(base string) string {
	switch {
	case strings.HasPrefix(base, "https://"):
		return "wss://" + strings.TrimPrefix(base, "https://") + "/v1/ws"
	case strings.HasPrefix(base, "http://"):
		return "ws://" + strings.TrimPrefix(base, "http://") + "/v1/ws"
	}
	return base + "/v1/ws"
}
