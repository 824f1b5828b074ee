package live

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/wire"
)

// top3 is the view the resume tests watch.
var top3 = map[string]any{"kind": "top", "limit": 3}

// scored submits members p<from>..p<to-1>, each scoring its number, one
// submission each (one change of the board-window each), to tenant's
// weekly board on e.
func scored(e *env, tenant string, from, to int) {
	e.t.Helper()
	for i := from; i < to; i++ {
		e.submit(tenant, "weekly", hub.Item{Member: fmt.Sprint("p", i), Score: float64(i)})
	}
}

// latestEnv starts a gateway with o and tenant a's weekly board (policy
// latest) scored p0..p<n-1>, one change each (scored).
func latestEnv(t *testing.T, o Options, n int) *env {
	t.Helper()
	e := newEnv(t, o)
	e.putBoard("a", "weekly", hub.Settings{Policy: "latest"})
	scored(e, "a", 0, n)
	return e
}

// aheadState returns what a client watching top3 holds on a gateway that
// applied n submissions: its rows and seq.
func aheadState(t *testing.T, n int) (map[int]rowJSON, uint64) {
	t.Helper()
	ahead := latestEnv(t, Options{}, n)
	w := ahead.dial("access_token="+ahead.token("a", auth.RoleRead), true, nil)
	w.Subscribe("w", "weekly", top3)
	var rows map[int]rowJSON
	checkFor(t, 5*time.Second, func() (ok error) {
		if rows, _ = w.Rows("w"); len(rows) != 3 {
			return fmt.Errorf("ahead: %d rows", len(rows))
		}
		return nil
	})
	return rows, w.LastSeq("w")
}

// resumeFrom subscribes id to top3 of tenant a's weekly board on c with since.
func resumeFrom(c *wsClient, id string, since uint64) {
	c.Send(map[string]any{"type": "subscribe", "id": id, "board": "weekly", "view": top3, "since": since})
}

// views returns the snapshots and diffs c got for id.
func views(c *wsClient, id string) []wsMsg {
	var out []wsMsg
	for _, m := range c.Messages() {
		if m.ID != nil && *m.ID == id && (m.Type == "snapshot" || m.Type == "diff") {
			out = append(out, m)
		}
	}
	return out
}

// TestResumeFromFutureWaits: two gateways that applied the same events,
// one ahead of the other. A watcher that held the ahead one's state and
// resumes on the one behind gets nothing (no older state) until that one
// has applied its seq, then a diff from it, in chain, to the same rows as
// a fresh watcher there. A second tenant with the same board name is
// answered at once, its submissions releasing nothing of the first's.
func TestResumeFromFutureWaits(t *testing.T) {
	rows, since := aheadState(t, 6)
	behind := newEnv(t, Options{ResumeWait: 20 * time.Second})
	behind.putBoard("a", "weekly", hub.Settings{Policy: "latest"})
	behind.putBoard("b", "weekly", hub.Settings{Policy: "latest"})
	scored(behind, "a", 0, 3)
	c := behind.dial("access_token="+behind.token("a", auth.RoleRead), true, nil)
	c.Seed("w", rows, since)
	resumeFrom(c, "w", since)
	checkFor(t, 5*time.Second, func() error {
		if n := behind.p.eng.Stats().Held; n != 1 {
			return fmt.Errorf("%d subscriptions held, want 1", n)
		}
		return nil
	})
	twin := behind.dial("access_token="+behind.token("b", auth.RoleRead), true, nil)
	twin.Subscribe("w", "weekly", top3)
	scored(behind, "b", 0, 10) // the twin's board passes since: nothing of a's moves
	scored(behind, "a", 3, 5)  // a's still short of since
	checkFor(t, 5*time.Second, func() error {
		if r, _ := twin.Rows("w"); len(r) != 3 || twin.LastSeq("w") < since {
			return fmt.Errorf("twin: %d rows at %d", len(r), twin.LastSeq("w"))
		}
		return nil
	})
	if got := views(c, "w"); len(got) != 0 {
		t.Fatalf("the gateway behind sent %+v before it applied since %d", got, since)
	}
	scored(behind, "a", 5, 8)
	fresh := behind.dial("access_token="+behind.token("a", auth.RoleRead), true, nil)
	fresh.Subscribe("f", "weekly", top3)
	checkFor(t, 5*time.Second, func() error {
		if err := c.Err(); err != nil {
			t.Fatal(err) // a diff out of chain
		}
		want, _ := fresh.Rows("f")
		got, _ := c.Rows("w")
		if len(want) != 3 || fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("resumed rows %v, fresh %v", got, want)
		}
		return nil
	})
	first := views(c, "w")[0]
	if first.Type != "diff" || *first.Prev != since || first.Seq < since {
		t.Fatalf("first message after the resume %+v, want a diff from %d", first, since)
	}
	if n := behind.p.eng.Stats().Held; n != 0 {
		t.Fatalf("%d subscriptions still held", n)
	}
}

// TestResumeFromFutureGivesUp: where the gateway does not apply since
// within the bound, the subscription ends with unavailable naming since,
// never having sent an older state; the connection stays and the id is
// free again.
func TestResumeFromFutureGivesUp(t *testing.T) {
	rows, since := aheadState(t, 6)
	behind := latestEnv(t, Options{ResumeWait: 300 * time.Millisecond}, 3)
	c := behind.dial("access_token="+behind.token("a", auth.RoleRead), true, nil)
	c.Seed("w", rows, since)
	resumeFrom(c, "w", since)
	checkFor(t, 5*time.Second, func() error {
		if len(c.Errors()) == 0 {
			return fmt.Errorf("no error yet")
		}
		return nil
	})
	e := c.Errors()[0]
	if e.Code != string(wire.CodeUnavailable) || !strings.HasPrefix(e.Message, "since: ") || !strings.Contains(e.Message, fmt.Sprint(since)) {
		t.Fatalf("error %+v, want unavailable naming since %d", e, since)
	}
	if got := views(c, "w"); len(got) != 0 {
		t.Fatalf("a resume the gateway could not serve sent %+v", got)
	}
	if n := testutil.ToFloat64(behind.p.metrics.resumeGaveUp); n != 1 || behind.p.eng.Stats().Held != 0 {
		t.Fatalf("gave up %v, held %d: want 1 and 0", n, behind.p.eng.Stats().Held)
	}
	c.Subscribe("w", "weekly", top3) // the id is free; the connection stays
	checkFor(t, 5*time.Second, func() error {
		if r, _ := c.Rows("w"); len(r) != 3 || c.LastSeq("w") >= since {
			return fmt.Errorf("after a new subscribe: %d rows at %d", len(r), c.LastSeq("w"))
		}
		return nil
	})
}

// TestResumeFromFutureClientGoes: a held resume whose client goes ends
// with its connection, long before the bound: nothing stays held and no
// timer gives up on it later.
func TestResumeFromFutureClientGoes(t *testing.T) {
	e := newEnv(t, Options{ResumeWait: time.Minute})
	e.putBoard("a", "weekly", hub.Settings{})
	scored(e, "a", 0, 2)
	c := e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
	resumeFrom(c, "w", 1000)
	checkFor(t, 5*time.Second, func() error {
		if n := e.p.eng.Stats().Held; n != 1 {
			return fmt.Errorf("%d held, want 1", n)
		}
		return nil
	})
	v := heldView(t, e.p)
	c.Conn().CloseNow()
	checkFor(t, 5*time.Second, func() error {
		if n, v := e.p.eng.Stats().Held, e.p.eng.Stats().Views; n != 0 || v != 0 {
			return fmt.Errorf("%d held, %d views after the client went", n, v)
		}
		return nil
	})
	// The bound is a minute away: what says no timer gives up later is
	// that the view's timer was stopped and dropped as it ended.
	v.mu.Lock()
	armed, ended := v.resume != nil, v.ended
	v.mu.Unlock()
	if armed || !ended {
		t.Fatalf("after the client went: timer still armed %v, view ended %v", armed, ended)
	}
	if n := testutil.ToFloat64(e.p.metrics.resumeGaveUp); n != 0 {
		t.Fatalf("gave up %v times on a client that went", n)
	}
}

// heldView returns the one view of p's one connection once its resume's
// bound is armed (armResume runs after the engine holds the view).
func heldView(t *testing.T, p *Plane) *liveView {
	t.Helper()
	var v *liveView
	checkFor(t, 5*time.Second, func() error {
		conns := p.connections()
		if len(conns) != 1 {
			return fmt.Errorf("%d connections, want 1", len(conns))
		}
		c := conns[0].(*wsConn)
		c.mu.Lock()
		n := len(c.subs)
		if n == 1 {
			v = c.subs[0].view
		}
		c.mu.Unlock()
		if n != 1 {
			return fmt.Errorf("%d subscriptions, want 1", n)
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		if v.resume == nil {
			return fmt.Errorf("the held resume's bound not armed")
		}
		return nil
	})
	return v
}

// TestStreamResumeFromFuture: an event stream resumed (Last-Event-ID)
// past what the gateway applied starts once it has, with a diff from
// that seq; past the bound it is refused 503 unavailable.
func TestStreamResumeFromFuture(t *testing.T) {
	_, since := aheadState(t, 6)
	behind := latestEnv(t, Options{ResumeWait: 20 * time.Second}, 3)
	tok := behind.token("a", auth.RoleRead)
	query := "board=weekly&kind=top&limit=3"
	req, err := http.NewRequest(http.MethodGet, behind.srv.URL+"/v1/stream?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Last-Event-ID", fmt.Sprint(since))
	type answer struct {
		resp *http.Response
		err  error
	}
	got := make(chan answer, 1)
	go func() { // the response starts only once the gateway applied since
		resp, err := http.DefaultClient.Do(req)
		got <- answer{resp, err}
	}()
	t.Cleanup(func() { // a test that failed before reading the answer closes it
		select {
		case a := <-got:
			if a.resp != nil {
				a.resp.Body.Close()
			}
		default:
		}
	})
	checkFor(t, 5*time.Second, func() error {
		if n := behind.p.eng.Stats().Held; n != 1 {
			return fmt.Errorf("%d held, want 1", n)
		}
		return nil
	})
	scored(behind, "a", 3, 7)
	a := <-got
	if a.err != nil {
		t.Fatal(a.err)
	}
	s := behind.streamOf(query, a.resp)
	if m := s.msg(); m.Type != "diff" || *m.Prev != since {
		t.Fatalf("stream resumed with %+v, want a diff from %d", m, since)
	}

	quick := newEnv(t, Options{ResumeWait: 200 * time.Millisecond})
	quick.putBoard("a", "weekly", hub.Settings{})
	resp := quick.tryStream("board=weekly&kind=top", quick.token("a", auth.RoleRead), http.Header{"Last-Event-ID": {fmt.Sprint(since)}})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "since: ") {
		t.Fatalf("stream past the bound: %d %s, want 503 naming since", resp.StatusCode, body)
	}
}

// TestStreamResumeClientGoes: an event stream waiting for its since ends
// its wait when its client goes, long before the bound.
func TestStreamResumeClientGoes(t *testing.T) {
	e := newEnv(t, Options{ResumeWait: time.Minute})
	e.putBoard("a", "weekly", hub.Settings{})
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+"/v1/stream?board=weekly&kind=top", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.token("a", auth.RoleRead))
	req.Header.Set("Last-Event-ID", "1000")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	checkFor(t, 5*time.Second, func() error {
		if n := e.p.eng.Stats().Held; n != 1 {
			return fmt.Errorf("%d held, want 1", n)
		}
		return nil
	})
	cancel()
	<-done
	checkFor(t, 5*time.Second, func() error {
		if n, v := e.p.eng.Stats().Held, e.p.eng.Stats().Views; n != 0 || v != 0 {
			return fmt.Errorf("%d held, %d views after the client went", n, v)
		}
		return nil
	})
}

// TestResumeHeldBoardDeleted: a resume from the future held on a board
// that is then deleted ends its wait at once (the bound is a minute) with
// what a live watcher of that board gets from the delete: the not_found
// error naming the board (gone.go), the connection and its other
// subscriptions going on; an event stream held so is refused 404 at once,
// as a stream of a board that does not exist. A second tenant's board of the
// same name, its resume held as well, stays held through the first's
// delete and is answered once its own board reaches since.
func TestResumeHeldBoardDeleted(t *testing.T) {
	rows, since := aheadState(t, 6)
	behind := newEnv(t, Options{ResumeWait: time.Minute})
	for _, tenant := range []string{"a", "b"} {
		behind.putBoard(tenant, "weekly", hub.Settings{Policy: "latest"})
		scored(behind, tenant, 0, 3)
	}
	behind.putBoard("a", "daily", hub.Settings{})
	tokA := behind.token("a", auth.RoleRead)
	c := behind.dial("access_token="+tokA, true, nil)
	c.Subscribe("d", "daily", top3) // the connection's other subscription
	c.Seed("w", rows, since)
	resumeFrom(c, "w", since)
	watcher := behind.dial("access_token="+tokA, true, nil)
	watcher.Subscribe("w", "weekly", top3)
	twin := behind.dial("access_token="+behind.token("b", auth.RoleRead), true, nil)
	twin.Seed("w", rows, since)
	resumeFrom(twin, "w", since)
	stream := heldStream(t, behind, tokA, since)
	checkFor(t, 5*time.Second, func() error {
		if n := behind.p.eng.Stats().Held; n != 3 || watcher.LastSeq("w") != 3 {
			return fmt.Errorf("%d held (want 3: a's socket and stream, b's), watcher at %d", n, watcher.LastSeq("w"))
		}
		return nil
	})
	if err := behind.hub.DeleteBoard(context.Background(), "casino-a", "weekly"); err != nil {
		t.Fatal(err)
	}
	var resp *http.Response
	select {
	case resp = <-stream:
	case <-time.After(10 * time.Second): // a failure's bound: the resume's is a minute
		t.Fatal("the held stream still waits 10 s after its board's delete")
	}
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("held stream after its board's delete: %d, want 404", resp.StatusCode)
	}
	resp.Body.Close()
	behind.submit("a", "daily", hub.Item{Member: "d1", Score: 1}) // after the delete, on c's other subscription
	checkFor(t, 5*time.Second, func() error {
		if r, _ := c.Rows("d"); len(r) != 1 {
			return fmt.Errorf("c's other subscription: %d rows", len(r))
		}
		return nil
	})
	for _, w := range []*wsClient{c, watcher} {
		endedWith(t, w, []string{"w"})
	}
	if got := views(c, "w"); len(got) != 0 {
		t.Fatalf("the held resume got %+v after its board's delete: want its error only", got)
	}
	if got := views(watcher, "w"); len(got) != 1 {
		t.Fatalf("the live watcher got %+v: want its first snapshot, then its error", got)
	}
	if n, gaveUp := behind.p.eng.Stats().Held, testutil.ToFloat64(behind.p.metrics.resumeGaveUp); n != 1 || gaveUp != 0 {
		t.Fatalf("%d held (want b's), %v gave up (want 0)", n, gaveUp)
	}
	if got := views(twin, "w"); len(got) != 0 || len(twin.Errors()) != 0 {
		t.Fatalf("b's held resume got %+v, %+v from a's delete", got, twin.Errors())
	}
	scored(behind, "b", 3, 8)
	checkFor(t, 5*time.Second, func() error {
		if got := views(twin, "w"); len(got) == 0 || got[0].Type != "diff" || *got[0].Prev != since {
			return fmt.Errorf("b's resume: %+v, want a diff from %d first", got, since)
		}
		return nil
	})
}

// heldStream opens an event stream of tenant a's weekly top 3 on e
// resuming from since (Last-Event-ID) and returns where its response
// comes, once the request is made.
func heldStream(t *testing.T, e *env, token string, since uint64) <-chan *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+"/v1/stream?board=weekly&kind=top&limit=3", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Last-Event-ID", fmt.Sprint(since))
	out := make(chan *http.Response, 1)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // ends a stream the test left open
	go func() {
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			resp = &http.Response{StatusCode: -1, Body: http.NoBody}
		}
		out <- resp
	}()
	return out
}
