package subscriptions

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/board"
)

// twoGateways returns the same board-window as two gateways hold it, ahead
// (every submission applied) and behind (only the first few), with a
// client that watched the top 5 on ahead and holds its state at ahead's
// last seq.
func twoGateways(t *testing.T, total, applied int) (ahead, behind *testWindow, keep *client) {
	t.Helper()
	ahead, behind = newTestWindow(t, board.Config{}), newTestWindow(t, board.Config{})
	ea := NewEngine(Config{})
	key := Key{"a", "weekly", "all"}
	keep = newClient()
	if _, err := ea.Subscribe(key, ahead, keep.out, "w", Spec{Kind: Top, Limit: 5}, nil); err != nil {
		t.Fatal(err)
	}
	for i := range total {
		ahead.submit(t, fmt.Sprint("p", i), float64(i))
		if i < applied {
			behind.submit(t, fmt.Sprint("p", i), float64(i))
		}
	}
	ahead.tick(ea, key)
	keep.drain(t)
	return ahead, behind, keep
}

// catchUp applies the submissions behind lacks, one tick each, up to n.
func catchUp(t *testing.T, e *Engine, key Key, w *testWindow, from, n int) {
	t.Helper()
	for i := from; i < n; i++ {
		w.submit(t, fmt.Sprint("p", i), float64(i))
		w.tick(e, key)
	}
}

// heldResume subscribes, on a fresh engine fed by the gateway behind (seq
// 6 of 10) at key, the view the client keep holds at seq 10: a resume from
// the future, held.
func heldResume(t *testing.T, key Key) (e *Engine, behind *testWindow, keep *client, s *Sub) {
	t.Helper()
	_, behind, keep = twoGateways(t, 10, 6)
	since := keep.seq["w"]
	e = NewEngine(Config{})
	behind.tick(e, key)
	s, err := e.Subscribe(key, behind, keep.out, "w", Spec{Kind: Top, Limit: 5}, &since)
	if err != nil {
		t.Fatal(err)
	}
	return e, behind, keep, s
}

// TestResumeFromFutureWaits: a resume with since past what this gateway's
// engine has seen of the board-window gets nothing (no older state) while
// the gateway catches up, and then a diff from since that the client
// applies in chain, ending at the view's state; the hold is counted while
// it lasts.
func TestResumeFromFutureWaits(t *testing.T) {
	key := Key{"a", "weekly", "all"}
	e, behind, keep, s := heldResume(t, key)
	catchUp(t, e, key, behind, 6, 9) // seq 9 < since 10: still held
	mustHolds(t, e)
	if n := keep.out.Len(); n != 0 || e.Stats().Held != 1 {
		t.Fatalf("%d messages wait, %d held, before the gateway reached since: want 0 and 1", n, e.Stats().Held)
	}
	select {
	case <-e.Ready(s):
		t.Fatal("Ready closed while held")
	default:
	}
	catchUp(t, e, key, behind, 9, 12)
	<-e.Ready(s)
	m, ok := keep.out.Next()
	if raw := m.AppendTo(nil); !ok || !strings.HasPrefix(string(raw), `{"type":"diff"`) {
		t.Fatalf("first message after the catch-up %s, want a diff from since", raw)
	} else {
		keep.apply(t, raw) // checks its prev against the seq held
	}
	keep.drain(t)
	if keep.seq["w"] != behind.seq || !sameRows(keep.state["w"], rowsOf(s.v.st.rows)) {
		t.Fatalf("client at seq %d with %v, view at %d with %v", keep.seq["w"], keep.state["w"], behind.seq, rowsOf(s.v.st.rows))
	}
	if e.Stats().Held != 0 || e.Abandon(s) {
		t.Fatalf("held %d after release, or Abandon ended a released subscription", e.Stats().Held)
	}
	mustHolds(t, e)
}

// mustHolds fails t where e's held lists break an invariant (checkHolds).
func mustHolds(t testing.TB, e *Engine) {
	t.Helper()
	if err := e.checkHolds(); err != nil {
		t.Fatal(err)
	}
}

// TestResumeHeldOtherTenant: a second tenant's board of the same name
// reaching since releases nothing of the first's, and is answered at once.
func TestResumeHeldOtherTenant(t *testing.T) {
	a, b := Key{"a", "weekly", "all"}, Key{"b", "weekly", "all"}
	e, _, keep, s := heldResume(t, a)
	other := newTestWindow(t, board.Config{})
	for i := range 20 {
		other.submit(t, fmt.Sprint("p", i), float64(i))
	}
	twin := newClient()
	if _, err := e.Subscribe(b, other, twin.out, "w", Spec{Kind: Top, Limit: 5}, nil); err != nil {
		t.Fatal(err)
	}
	other.tick(e, b)
	twin.drain(t)
	if twin.seq["w"] != 20 || keep.out.Len() != 0 || e.Stats().Held != 1 {
		t.Fatalf("twin at %d, %d messages for the held one, %d held: want 20, 0, 1", twin.seq["w"], keep.out.Len(), e.Stats().Held)
	}
	if !e.Abandon(s) {
		t.Fatal("Abandon of a held subscription reported false")
	}
	<-e.Ready(s)
	if keep.out.Len() != 0 || e.Stats().Held != 0 || e.Stats().Views != 1 {
		t.Fatalf("after Abandon: %d messages, %d held, %d views: want 0, 0, 1", keep.out.Len(), e.Stats().Held, e.Stats().Views)
	}
}

// TestResumeUnsubscribedWhileHeld: a held subscription that ends (its
// connection went) leaves the hold at once: Ready closes, nothing is put.
func TestResumeUnsubscribedWhileHeld(t *testing.T) {
	key := Key{"a", "weekly", "all"}
	e, behind, keep, s := heldResume(t, key)
	e.Leave([]*Sub{s})
	<-e.Ready(s)
	catchUp(t, e, key, behind, 6, 12)
	if keep.out.Len() != 0 || e.Stats().Held != 0 || e.Abandon(s) {
		t.Fatalf("%d messages, %d held after the subscription ended", keep.out.Len(), e.Stats().Held)
	}
	mustHolds(t, e)
}

// TestResumeViewUnchangedSince: a view that last changed before since,
// on a gateway that has seen since, answers a resume with its state as a
// snapshot at since, never at the older seq it last changed at.
func TestResumeViewUnchangedSince(t *testing.T) {
	w := newTestWindow(t, board.Config{})
	e := NewEngine(Config{})
	key := Key{"a", "weekly", "all"}
	w.submit(t, "lead", 1000)
	old := newClient()
	if _, err := e.Subscribe(key, w, old.out, "w", Spec{Kind: Top, Limit: 1}, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 5 { // the window moves on; the top 1 does not
		w.submit(t, fmt.Sprint("p", i), float64(i))
	}
	w.tick(e, key)
	since := w.seq // the seq another gateway's fresh view carried
	c := newClient()
	if _, err := e.Subscribe(key, w, c.out, "w", Spec{Kind: Top, Limit: 1}, &since); err != nil {
		t.Fatal(err)
	}
	m, ok := c.out.Next()
	if !ok {
		t.Fatal("no first message")
	}
	c.apply(t, m.AppendTo(nil))
	if c.seq["w"] != since || c.state["w"][1] != "lead 1000 0" {
		t.Fatalf("first message at seq %d with %v, want a snapshot at %d with lead", c.seq["w"], c.state["w"], since)
	}
	w.submit(t, "new", 2000)
	w.tick(e, key)
	c.drain(t) // the next change follows since in chain (or is a snapshot)
	if c.state["w"][1] != "new 2000 0" {
		t.Fatalf("after a new leader the client holds %v", c.state["w"])
	}
}

// holdMany holds n subscriptions of out to key's top views (five limits:
// five views) on e, fed by w, each resuming from a since past w's seq:
// since w.seq+1+i%spread.
func holdMany(t testing.TB, e *Engine, key Key, w *testWindow, out *Outbox, n, spread int) []*Sub {
	t.Helper()
	subs := make([]*Sub, n)
	for i := range subs {
		since := w.seq + 1 + uint64(i%spread)
		s, err := e.Subscribe(key, w, out, fmt.Sprint("h", i), Spec{Kind: Top, Limit: 1 + i%5}, &since)
		if err != nil {
			t.Fatal(err)
		}
		subs[i] = s
	}
	return subs
}

// isReady reports whether e no longer holds s.
func isReady(e *Engine, s *Sub) bool {
	select {
	case <-e.Ready(s):
		return true
	default:
		return false
	}
}

// TestHeldStorm: thousands of held subscriptions of one board-window give
// up in a random order (a reconnect storm through a lagging gateway),
// while an Apply releases those whose since it reached and others end
// with their connections: the held list stays consistent throughout
// (checkHolds), each subscription is released or ended exactly once, and
// at the end the list is empty, its array let go.
func TestHeldStorm(t *testing.T) {
	const n = 4000
	key := Key{"a", "weekly", "all"}
	w := newTestWindow(t, board.Config{})
	for i := range 6 {
		w.submit(t, fmt.Sprint("p", i), float64(i))
	}
	e := NewEngine(Config{})
	w.tick(e, key)
	c := newClient()
	subs := holdMany(t, e, key, w, c.out, n, 8) // since 7..14
	if err := e.checkHolds(); err != nil || e.Stats().Held != n {
		t.Fatalf("after holding %d: %v, %d held", n, err, e.Stats().Held)
	}
	order := rand.New(rand.NewPCG(25, 1)).Perm(n)
	for k, i := range order[:n/2] {
		if !e.Abandon(subs[i]) {
			t.Fatalf("Abandon of held %d reported false", i)
		}
		if k%500 == 0 {
			if err := e.checkHolds(); err != nil {
				t.Fatalf("after %d abandons: %v", k+1, err)
			}
		}
	}
	catchUp(t, e, key, w, 6, 10) // seq 10: since 7..10 released
	if err := e.checkHolds(); err != nil {
		t.Fatal(err)
	}
	abandoned := map[int]bool{}
	for _, i := range order[:n/2] {
		abandoned[i] = true
	}
	var rest []*Sub
	for i, s := range subs {
		since := uint64(7 + i%8)
		switch ready := isReady(e, s); {
		case !ready && (abandoned[i] || since <= w.seq):
			t.Fatalf("sub %d (since %d, abandoned %v) still held at seq %d", i, since, abandoned[i], w.seq)
		case ready && !abandoned[i] && since > w.seq:
			t.Fatalf("sub %d (since %d) released at seq %d", i, since, w.seq)
		case !ready:
			rest = append(rest, s)
		}
	}
	if e.Stats().Held != len(rest) {
		t.Fatalf("%d held, %d not ready", e.Stats().Held, len(rest))
	}
	e.Leave(rest) // their connections go
	if err := e.checkHolds(); err != nil || e.Stats().Held != 0 {
		t.Fatalf("after the rest left: %v, %d held", err, e.Stats().Held)
	}
	for _, ws := range e.windows {
		if len(ws.held) != 0 || cap(ws.held) > 64 {
			t.Fatalf("held list of %d, capacity %d, after every hold ended", len(ws.held), cap(ws.held))
		}
	}
}

// TestResumeHeldBoardDeleted: a held resume whose board-window is deleted
// (an Apply of a reset where it holds nothing) ends its wait at once with
// what a watcher of that board-window gets from the delete: nothing sent,
// still a watcher, never abandoned. A second tenant's board of the same
// name, held as well, stays held and is released by its own catch-up.
func TestResumeHeldBoardDeleted(t *testing.T) {
	a, b := Key{"a", "weekly", "all"}, Key{"b", "weekly", "all"}
	e, behind, keep, s := heldResume(t, a)
	watcher := newClient() // a's view as a live watcher holds it
	if _, err := e.Subscribe(a, behind, watcher.out, "w", Spec{Kind: Top, Limit: 5}, nil); err != nil {
		t.Fatal(err)
	}
	watcher.drain(t)
	other := newTestWindow(t, board.Config{})
	catchUp(t, e, b, other, 0, 6)
	since := keep.seq["w"]
	twin := newClient()
	ts, err := e.Subscribe(b, other, twin.out, "w", Spec{Kind: Top, Limit: 5}, &since)
	if err != nil {
		t.Fatal(err)
	}
	deleted := &testWindow{ids: map[string]uint32{}} // no board, seq 0: as the hub's feed hands a deleted one
	e.Apply(a, deleted, nil, true)
	e.Flush()
	if !isReady(e, s) || isReady(e, ts) {
		t.Fatalf("after a's delete: a's hold ended %v, b's %v: want true, false", isReady(e, s), isReady(e, ts))
	}
	if keep.out.Len() != 0 || watcher.out.Len() != 0 {
		t.Fatalf("after the delete the held one has %d messages, the watcher %d: want none, as the watcher", keep.out.Len(), watcher.out.Len())
	}
	if e.Abandon(s) || e.Stats().Held != 1 || e.Stats().Subscriptions[Top] != 3 {
		t.Fatalf("held %d, %d top subscriptions, or Abandon ended a's: want 1 (b's) and 3", e.Stats().Held, e.Stats().Subscriptions[Top])
	}
	mustHolds(t, e)
	catchUp(t, e, b, other, 6, int(since)) // b's board reaches since: its hold is released by its own Apply
	if !isReady(e, ts) || twin.out.Len() != 1 || e.Stats().Held != 0 {
		t.Fatalf("b at since: ready %v, %d messages, %d held: want true, 1, 0", isReady(e, ts), twin.out.Len(), e.Stats().Held)
	}
	mustHolds(t, e)
}

// TestResumeHeldReset: a reset of the standing board-window (its seq one
// more, short of since) keeps a resume held; one whose seq went back (the
// board deleted and made again within one tick) ends its wait, as a delete.
func TestResumeHeldReset(t *testing.T) {
	key := Key{"a", "weekly", "all"}
	e, behind, keep, s := heldResume(t, key)
	behind.b, _ = board.New(board.Config{}) // a reset: emptied, one more change
	behind.seq++
	e.Apply(key, behind, nil, true)
	e.Flush()
	if isReady(e, s) || e.Stats().Held != 1 {
		t.Fatalf("a reset to seq %d (since %d) ended the hold", behind.seq, keep.seq["w"])
	}
	again := newTestWindow(t, board.Config{}) // made again: seq from 0, another generation
	again.gen = 2
	again.submit(t, "p0", 1)
	e.Apply(key, again, nil, true)
	e.Flush()
	if !isReady(e, s) || e.Stats().Held != 0 || keep.out.Len() != 0 {
		t.Fatalf("board made again at seq %d: ready %v, %d held, %d messages: want true, 0, 0", again.seq, isReady(e, s), e.Stats().Held, keep.out.Len())
	}
	mustHolds(t, e)
}

// TestResumeHeldMadeAgainPast: a board deleted and made again within one
// tick whose new window passed the old one's seq (short of since) ends
// the hold as a delete: its generation tells, not its seq; never a
// release later with a diff from since that mixes the two boards.
func TestResumeHeldMadeAgainPast(t *testing.T) {
	key := Key{"a", "weekly", "all"}
	e, behind, keep, s := heldResume(t, key)
	again := newTestWindow(t, board.Config{})
	again.gen = 2
	for i := 0; uint64(i) <= behind.seq; i++ { // one past the old seq, short of since
		again.submit(t, fmt.Sprintf("q%d", i), float64(i+1))
	}
	if again.seq <= behind.seq || again.seq >= keep.seq["w"] {
		t.Fatalf("made again at seq %d: want past %d, short of %d", again.seq, behind.seq, keep.seq["w"])
	}
	e.Apply(key, again, nil, true)
	e.Flush()
	if !isReady(e, s) || e.Stats().Held != 0 || keep.out.Len() != 0 {
		t.Fatalf("board made again at seq %d: ready %v, %d held, %d messages: want true, 0, 0", again.seq, isReady(e, s), e.Stats().Held, keep.out.Len())
	}
	mustHolds(t, e)
}
