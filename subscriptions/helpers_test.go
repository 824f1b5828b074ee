package subscriptions

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"github.com/rankwire/rankwire/board"
)

// testWindow is a board-window as the hub keeps one: a real board.Board, a
// seq bumped by every change, an id index, and the changes since the last
// Apply. Only the tests' single goroutine touches it.
type testWindow struct {
	b        *board.Board
	seq      uint64
	names    []string
	ids      map[string]uint32
	pending  []Change
	profiles map[uint32]Profile
	review   map[uint32]bool
	gen      uint64 // Gen: 1 unless a test deletes the board (0) or makes it again (2, …)
}

func newTestWindow(t testing.TB, cfg board.Config) *testWindow {
	b, err := board.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &testWindow{b: b, ids: map[string]uint32{}, gen: 1}
}

func (w *testWindow) Board() *board.Board { return w.b }
func (w *testWindow) Seq() uint64         { return w.seq }
func (w *testWindow) Gen() uint64         { return w.gen }
func (w *testWindow) Pending() []Change   { return w.pending }
func (w *testWindow) Profile(h uint32) Profile {
	return w.profiles[h]
}
func (w *testWindow) UnderReview(h uint32) bool { return w.review[h] }
func (w *testWindow) Resolve(id string) (uint32, bool) {
	h, ok := w.ids[id]
	return h, ok
}
func (w *testWindow) Name(h uint32) (string, bool) {
	if int(h) < len(w.names) {
		return w.names[h], true
	}
	return "", false
}

func (w *testWindow) handle(id string) uint32 {
	if h, ok := w.ids[id]; ok {
		return h
	}
	w.ids[id] = uint32(len(w.names))
	w.names = append(w.names, id)
	return w.ids[id]
}

func (w *testWindow) note(c board.Change) {
	if c.Applied || c.Moved() {
		w.seq++
		w.pending = append(w.pending, Change{Change: c, Seq: w.seq, Total: w.b.Len()})
	}
}

func (w *testWindow) submit(t testing.TB, id string, score float64) {
	c, err := w.b.Submit(board.Submission{Member: w.handle(id), Score: score, Seq: w.seq + 1})
	if err != nil {
		t.Fatal(err)
	}
	w.note(c)
}

func (w *testWindow) remove(id string) {
	if c, ok := w.b.Remove(w.handle(id)); ok {
		w.note(c)
	}
}

// tick hands the pending changes to e and flushes, as the hub's ticker does.
func (w *testWindow) tick(e *Engine, key Key) {
	e.Apply(key, w, w.pending, false)
	w.pending = nil
	e.Flush()
}

// msg is a decoded server message.
type msg struct {
	Type  string  `json:"type"`
	ID    string  `json:"id"`
	Seq   uint64  `json:"seq"`
	Prev  *uint64 `json:"prev"`
	Total int     `json:"total"`
	Rows  []struct {
		Rank     int     `json:"rank"`
		Member   string  `json:"member"`
		Score    float64 `json:"score"`
		Subscore float64 `json:"subscore"`
	} `json:"rows"`
	Gone []int `json:"gone"`
}

// client applies snapshots and diffs as PROTOCOL.md tells a client to.
type client struct {
	out   *Outbox
	state map[string]map[int]string // sub id → rank → "member score subscore"
	seq   map[string]uint64
	msgs  int
}

func newClient() *client {
	return &client{out: NewOutbox(0, nil), state: map[string]map[int]string{}, seq: map[string]uint64{}}
}

// drain reads every waiting message and applies it.
func (c *client) drain(t testing.TB) {
	t.Helper()
	for {
		m, ok := c.out.Next()
		if !ok {
			return
		}
		c.apply(t, m.AppendTo(nil))
	}
}

func (c *client) apply(t testing.TB, raw []byte) {
	t.Helper()
	var m msg
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("message %q: %v", raw, err)
	}
	c.msgs++
	switch m.Type {
	case "snapshot":
		c.state[m.ID] = map[int]string{}
	case "diff":
		if m.Prev == nil || *m.Prev != c.seq[m.ID] {
			t.Fatalf("sub %s: diff prev %v, last seq %d: %s", m.ID, m.Prev, c.seq[m.ID], raw)
		}
		for _, g := range m.Gone {
			delete(c.state[m.ID], g)
		}
	default:
		t.Fatalf("unexpected message %s", raw)
	}
	for _, r := range m.Rows {
		c.state[m.ID][r.Rank] = fmt.Sprintf("%s %v %v", r.Member, r.Score, r.Subscore)
	}
	c.seq[m.ID] = m.Seq
}

// rowsOf renders rows as the client keeps them.
func rowsOf(rows []Row) map[int]string {
	out := map[int]string{}
	for _, r := range rows {
		out[r.Rank] = fmt.Sprintf("%s %v %v", r.Member, r.Score, r.Subscore)
	}
	return out
}

func sameRows(a, b map[int]string) bool { return maps.Equal(a, b) }

// resumable subscribes keep ("keep") to spec's view of key, ticks five
// players in, then one more: a resume from since, the seq keep had before
// the last tick, is within reach of a diff. s is keep's subscription.
func resumable(t *testing.T, e *Engine, w *testWindow, key Key, spec Spec) (keep *client, s *Sub, since uint64) {
	t.Helper()
	keep = newClient()
	s, err := e.Subscribe(key, w, keep.out, "keep", spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		w.submit(t, fmt.Sprint("p", i), float64(i))
	}
	w.tick(e, key)
	keep.drain(t)
	since = keep.seq["keep"]
	w.submit(t, "p9", 100)
	w.tick(e, key)
	return keep, s, since
}
