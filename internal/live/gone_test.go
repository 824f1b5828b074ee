package live

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/subscriptions"
)

// deletedMsg is the message of a view whose board "weekly" was deleted.
const deletedMsg = `board: "weekly" was deleted`

// viewKinds subscribes c to tenant a's weekly board with one view of each
// kind (top, around, rank, members) over the all window, and a top 3 of
// its day window, one following it; it returns their ids.
func viewKinds(c *wsClient) []string {
	views := map[string]map[string]any{
		"top":     top3,
		"around":  {"kind": "around", "member": "p2", "radius": 1},
		"rank":    {"kind": "rank", "rank": 1},
		"members": {"kind": "members", "members": []string{"p1", "p4"}},
	}
	var ids []string
	for id, v := range views {
		c.Subscribe(id, "weekly", v)
		ids = append(ids, id)
	}
	c.Send(map[string]any{"type": "subscribe", "id": "day", "board": "weekly", "window": "day", "view": top3})
	c.Send(map[string]any{"type": "subscribe", "id": "follow", "board": "weekly", "window": "day", "follow": true, "view": top3})
	return append(ids, "day", "follow")
}

// endedWith waits until c got a not_found error naming the deleted board
// for each of ids, and fails on any other error.
func endedWith(t *testing.T, c *wsClient, ids []string) {
	t.Helper()
	checkFor(t, 5*time.Second, func() error {
		got := map[string]bool{}
		for _, m := range c.Errors() {
			if m.ID == nil || m.Code != "not_found" || m.Message != deletedMsg {
				t.Fatalf("error %+v: want not_found %q with an id", m, deletedMsg)
			}
			got[*m.ID] = true
		}
		for _, id := range ids {
			if !got[id] {
				return fmt.Errorf("%s: no error yet (errors: %+v)", id, c.Errors())
			}
		}
		if len(got) != len(ids) {
			return fmt.Errorf("errors for %v, want %v", got, ids)
		}
		return nil
	})
}

// TestDeletedBoardEndsViews: a board's delete ends every live view of it
// on a WebSocket (each kind, the all and the day window, following) with one
// not_found error each and nothing after, even once a board made again
// under its name passes the old seq (no diff chained on to the deleted
// board's rows); the connection's view of another board goes on, and the
// ended ids are free again. A second tenant's board of the same name keeps
// its watcher.
func TestDeletedBoardEndsViews(t *testing.T) {
	e, c := twinWeeklies(t)
	ids := viewKinds(c)
	c.Subscribe("d", "daily", top3)
	twin := e.dial("access_token="+e.token("b", auth.RoleRead), true, nil)
	twin.Subscribe("w", "weekly", top3)
	checkFor(t, 5*time.Second, func() error {
		for _, id := range ids {
			if len(views(c, id)) == 0 {
				return fmt.Errorf("%s: no snapshot yet", id)
			}
		}
		if len(views(twin, "w")) == 0 || len(views(c, "d")) == 0 {
			return fmt.Errorf("the twin or daily: no snapshot yet")
		}
		return nil
	})
	oldSeq := c.LastSeq("top")
	before := map[string]int{}
	for _, id := range ids {
		before[id] = len(views(c, id))
	}
	if err := e.hub.DeleteBoard(context.Background(), "casino-a", "weekly"); err != nil {
		t.Fatal(err)
	}
	endedWith(t, c, ids)
	// Made again under the name, past the old seq: the old ids hear nothing.
	e.putBoard("a", "weekly", hub.Settings{Policy: "latest", Windows: []string{"all", "day"}})
	scored(e, "a", 10, 10+int(oldSeq)+3)
	e.submit("a", "daily", hub.Item{Member: "d1", Score: 1})
	scored(e, "b", 5, 6)
	checkFor(t, 5*time.Second, func() error {
		if len(views(c, "d")) < 2 || len(views(twin, "w")) < 2 {
			return fmt.Errorf("daily %d, twin %d messages: want a diff each", len(views(c, "d")), len(views(twin, "w")))
		}
		return nil
	})
	c.Subscribe("top", "weekly", top3) // its id is free again: the new board's snapshot
	checkFor(t, 5*time.Second, func() error {
		if got := views(c, "top"); len(got) != before["top"]+1 || got[len(got)-1].Type != "snapshot" {
			return fmt.Errorf("top again: %d messages, want a new snapshot", len(got))
		}
		return nil
	})
	for _, id := range ids {
		if n := len(views(c, id)); id != "top" && n != before[id] {
			t.Fatalf("%s: %d messages after its board's delete, want none (%d before)", id, n-before[id], before[id])
		}
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	if len(twin.Errors()) != 0 || len(c.Errors()) != len(ids) {
		t.Fatalf("twin errors %+v; a's %d errors, want %d", twin.Errors(), len(c.Errors()), len(ids))
	}
	if got := e.p.eng.Stats().Subscriptions; got[0]+got[1]+got[2]+got[3] != 3 {
		t.Fatalf("engine subscriptions %v: want daily, top again and the twin's", got)
	}
}

// gatedFeed is the plane's feed with a gate after a Flush: while shut,
// the hub's feed goroutine waits there, so that what the tenant applies
// meanwhile comes in its next drain, as one tick.
type gatedFeed struct {
	hub.Feed
	mu   sync.Mutex
	gate chan struct{} // nil: open
}

func (g *gatedFeed) Flush() {
	g.Feed.Flush()
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		<-gate
	}
}

func (g *gatedFeed) Settle(ctx context.Context, deadline time.Time) {
	g.Feed.(hub.FeedSettler).Settle(ctx, deadline)
}

func (g *gatedFeed) shut() chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gate = make(chan struct{})
	return g.gate
}

func (g *gatedFeed) open(gate chan struct{}) {
	g.mu.Lock()
	g.gate = nil
	g.mu.Unlock()
	close(gate)
}

// TestDeletedBoardMadeAgainInTick: a board deleted and made again within
// one tick, its seq past the old one's, ends the old board's watchers with
// the error and no diff of the old chain; a watcher that subscribed to the
// new board within that tick goes on from the new board's rows.
func TestDeletedBoardMadeAgainInTick(t *testing.T) {
	e, tok, old, reopen := madeAgainInTick(t)
	fresh := e.dial("access_token="+tok, true, nil)
	fresh.Subscribe("w", "weekly", top3)
	checkFor(t, 5*time.Second, func() error {
		if len(views(fresh, "w")) == 0 {
			return fmt.Errorf("the new board's watcher has no snapshot yet")
		}
		return nil
	})
	reopen()
	endedWith(t, old, []string{"w"})
	scored(e, "a", 30, 32)
	checkFor(t, 5*time.Second, func() error {
		if fresh.LastSeq("w") != 10 {
			return fmt.Errorf("the new board's watcher at %d, want 10", fresh.LastSeq("w"))
		}
		return nil
	})
	if got := views(old, "w"); len(got) != 1 {
		t.Fatalf("the old board's watcher got %+v: want its first snapshot only", got)
	}
	rows, _ := fresh.Rows("w")
	if rows[1].Member != "p31" || rows[3].Member != "p27" || len(fresh.Errors()) != 0 {
		t.Fatalf("the new board's watcher: rows %+v, errors %+v", rows, fresh.Errors())
	}
	for _, c := range []*wsClient{old, fresh} {
		if err := c.Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStreamBoardDeleted: an event stream of a board that is deleted gets
// the error event, then the response ends (no close event); a stream of a
// second tenant's board of the same name goes on. A stream held on a
// resume from the future when its board is deleted is refused 404.
func TestStreamBoardDeleted(t *testing.T) {
	e := newEnv(t, Options{ResumeWait: time.Minute})
	for _, tenant := range []string{"a", "b"} {
		e.putBoard(tenant, "weekly", hub.Settings{Policy: "latest"})
		scored(e, tenant, 0, 3)
	}
	tokA := e.token("a", auth.RoleRead)
	s := e.stream("board=weekly&kind=top&limit=3", tokA, nil)
	twin := e.stream("board=weekly&kind=top&limit=3", e.token("b", auth.RoleRead), nil)
	if m := s.msg(); m.Type != "snapshot" {
		t.Fatalf("first event %+v", m)
	}
	if m := twin.msg(); m.Type != "snapshot" {
		t.Fatalf("twin's first event %+v", m)
	}
	held := heldStream(t, e, tokA, 100)
	checkFor(t, 5*time.Second, func() error {
		if n := e.p.eng.Stats().Held; n != 1 {
			return fmt.Errorf("%d held", n)
		}
		return nil
	})
	if err := e.hub.DeleteBoard(context.Background(), "casino-a", "weekly"); err != nil {
		t.Fatal(err)
	}
	m := s.msg()
	if m.Type != "error" || m.ID == nil || *m.ID != "stream" || m.Code != "not_found" || m.Message != deletedMsg {
		t.Fatalf("after the delete: %+v, want the not_found error of id stream", m)
	}
	select {
	case <-s.done:
		if s.err != nil {
			t.Fatalf("the body ended badly: %v", s.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end after its error")
	}
	select {
	case ev := <-s.events:
		t.Fatalf("an event after the error: %+v", ev)
	default:
	}
	select {
	case resp := <-held:
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("the held stream: %d, want 404", resp.StatusCode)
		}
	case <-time.After(10 * time.Second): // the resume's bound is a minute
		t.Fatal("the held stream still waits after its board's delete")
	}
	scored(e, "b", 3, 4)
	if m := twin.msg(); m.Type != "diff" {
		t.Fatalf("the twin's stream after a's delete: %+v, want its diff", m)
	}
}

// TestFeedEndsABoardOncePerTick: of a tick's batches that say Deleted,
// only the first of each tenant's board ends its views (EndBoard covers
// every window of it); a twin tenant's board of the same name, and the
// same board in the next tick (after Flush), are ended on their own.
func TestFeedEndsABoardOncePerTick(t *testing.T) {
	f := &feed{p: &Plane{eng: subscriptions.NewEngine(subscriptions.Config{})}}
	gone := func(tenant, window string) hub.FeedBatch {
		return hub.FeedBatch{Tenant: tenant, Board: "weekly", Window: window, Reset: true, Deleted: true}
	}
	steps := []struct {
		b    hub.FeedBatch
		want bool
	}{
		{gone("a", "all"), true},
		{gone("a", "day:2026-11-27"), false},
		{gone("b", "all"), true},
		{gone("a", "all"), false},
	}
	for i, st := range steps {
		if got := f.endOnce(st.b, 0); got != st.want {
			t.Fatalf("step %d (%s/%s): ended %v, want %v", i, st.b.Tenant, st.b.Window, got, st.want)
		}
	}
	f.Flush()
	if !f.endOnce(gone("a", "day:2026-11-27"), 0) {
		t.Fatal("the next tick's delete of the board: not ended")
	}
}

// wsConnOf is the plane's one WebSocket of tenant (a test has one each).
func wsConnOf(t *testing.T, p *Plane, tenant string) *wsConn {
	t.Helper()
	for _, c := range p.connections() {
		if wc, ok := c.(*wsConn); ok {
			if sc, authed := wc.current(); authed && sc.Tenant == tenant {
				return wc
			}
		}
	}
	t.Fatalf("no WebSocket of %s", tenant)
	return nil
}

// TestDeletedBoardFreedWhileIdle: a deleted board's ended subscriptions
// leave their connection once its writer sent their errors, with the
// client idle (no subscribe, unsubscribe or GET /v1/tenant after the
// delete): the connection holds only its other board's, no follower of the
// board is left in the plane's index, the engine counts only the live
// ones; an ended id is then free again, and a second tenant's board of the
// same name goes on. Before, the ended ones stayed (with their views) until
// the client next sent a subscribe or unsubscribe, or Usage ran.
func TestDeletedBoardFreedWhileIdle(t *testing.T) {
	e, c := twinWeeklies(t)
	c.Subscribe("top", "weekly", top3)
	c.Send(map[string]any{"type": "subscribe", "id": "follow", "board": "weekly", "window": "day", "follow": true, "view": top3})
	c.Subscribe("d", "daily", top3)
	twin := e.dial("access_token="+e.token("b", auth.RoleRead), true, nil)
	twin.Subscribe("w", "weekly", top3)
	checkFor(t, 5*time.Second, func() error {
		for _, id := range []string{"top", "follow", "d"} {
			if len(views(c, id)) == 0 {
				return fmt.Errorf("%s: no snapshot yet", id)
			}
		}
		if len(views(twin, "w")) == 0 {
			return fmt.Errorf("the twin: no snapshot yet")
		}
		return nil
	})
	wc := wsConnOf(t, e.p, "casino-a")
	e.p.followMu.Lock()
	followed := len(e.p.follows)
	e.p.followMu.Unlock()
	if followed != 1 {
		t.Fatalf("%d followed keys, want a's weekly day", followed)
	}
	if err := e.hub.DeleteBoard(context.Background(), "casino-a", "weekly"); err != nil {
		t.Fatal(err)
	}
	endedWith(t, c, []string{"top", "follow"})
	checkFor(t, 5*time.Second, func() error {
		wc.mu.Lock()
		n := len(wc.subs)
		wc.mu.Unlock()
		e.p.followMu.Lock()
		followed := len(e.p.follows)
		e.p.followMu.Unlock()
		got := e.p.eng.Stats().Subscriptions
		if n != 1 || followed != 0 || got[0]+got[1]+got[2]+got[3] != 2 {
			return fmt.Errorf("a's connection holds %d, %d followed keys, engine %v: want daily's alone, none, daily and the twin's", n, followed, got)
		}
		return nil
	})
	scored(e, "b", 5, 6)
	checkFor(t, 5*time.Second, func() error {
		if len(views(twin, "w")) < 2 {
			return fmt.Errorf("twin: %d messages, want a diff", len(views(twin, "w")))
		}
		return nil
	})
	c.Subscribe("top", "daily", top3) // the ended id is free again
	checkFor(t, 5*time.Second, func() error {
		if got := views(c, "top"); len(got) != 2 || got[1].Type != "snapshot" {
			return fmt.Errorf("top again: %d messages, want a new snapshot", len(got))
		}
		return nil
	})
	if len(twin.Errors()) != 0 || len(c.Errors()) != 2 {
		t.Fatalf("twin errors %+v; a's errors %+v, want the two ends", twin.Errors(), c.Errors())
	}
}

// TestResumeBoardMadeAgainInTick: a resume with since to a board deleted
// and made again within one tick, sent before that tick is applied (the
// board-window still holds the deleted board's seq and changes), gets the
// new board's snapshot at its own seq, not a diff from the deleted board's
// chain; it goes on with the new board's diffs after the tick, while the
// deleted board's watcher ends.
func TestResumeBoardMadeAgainInTick(t *testing.T) {
	e, tok, old, reopen := madeAgainInTick(t)
	r := e.dial("access_token="+tok, true, nil)
	resumeFrom(r, "w", 3) // within the old board's chain
	checkFor(t, 5*time.Second, func() error {
		if len(views(r, "w")) == 0 {
			return fmt.Errorf("the resume has no answer yet")
		}
		return nil
	})
	if got := views(r, "w"); got[0].Type != "snapshot" || got[0].Seq != 8 {
		t.Fatalf("the resume got %+v first: want the new board's snapshot at 8", got[0])
	}
	reopen()
	endedWith(t, old, []string{"w"})
	scored(e, "a", 30, 32)
	checkFor(t, 5*time.Second, func() error {
		if r.LastSeq("w") != 10 {
			return fmt.Errorf("the resumed watcher at %d, want 10", r.LastSeq("w"))
		}
		return nil
	})
	rows, _ := r.Rows("w")
	if rows[1].Member != "p31" || rows[3].Member != "p27" || len(r.Errors()) != 0 {
		t.Fatalf("the resumed watcher: rows %+v, errors %+v", rows, r.Errors())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
}

// twinWeeklies starts the delete tests' gateway: tenants a and b each with
// a board "weekly" (windows all and day, five members scored), a's board
// "daily", and a reader of tenant a connected.
func twinWeeklies(t *testing.T) (*env, *wsClient) {
	t.Helper()
	e := newEnv(t, Options{})
	for _, tenant := range []string{"a", "b"} {
		e.putBoard(tenant, "weekly", hub.Settings{Policy: "latest", Windows: []string{"all", "day"}})
		scored(e, tenant, 0, 5)
	}
	e.putBoard("a", "daily", hub.Settings{})
	return e, e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
}

// madeAgainInTick starts the made-again-within-a-tick tests: tenant a's
// board "weekly" scored to seq 5 with a watcher "w" (old) on it, then,
// while a tick's Flush waits at a gate, weekly deleted, made again and
// scored to seq 8. reopen lets the tick through.
func madeAgainInTick(t *testing.T) (e *env, tok string, old *wsClient, reopen func()) {
	t.Helper()
	e = newEnv(t, Options{})
	g := &gatedFeed{Feed: e.p.Feed()}
	e.hub.SetFeed(g)
	e.putBoard("a", "weekly", hub.Settings{Policy: "latest"})
	e.putBoard("a", "daily", hub.Settings{})
	scored(e, "a", 0, 5)
	tok = e.token("a", auth.RoleRead)
	old = e.dial("access_token="+tok, true, nil)
	old.Subscribe("w", "weekly", top3)
	checkFor(t, 5*time.Second, func() error {
		if old.LastSeq("w") != 5 {
			return fmt.Errorf("old watcher at %d", old.LastSeq("w"))
		}
		return nil
	})
	gate := g.shut()
	e.submit("a", "daily", hub.Item{Member: "d1", Score: 1}) // a tick, whose Flush waits at the gate
	if err := e.hub.DeleteBoard(context.Background(), "casino-a", "weekly"); err != nil {
		t.Fatal(err)
	}
	e.putBoard("a", "weekly", hub.Settings{Policy: "latest"})
	scored(e, "a", 20, 28) // seq 8: past the old board's 5
	return e, tok, old, func() { g.open(gate) }
}
