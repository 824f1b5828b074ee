package live

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

// sseEvent is one event of a stream as a client parses it.
type sseEvent struct {
	ID, Event, Data string
	HasID           bool
}

// sseClient is a stream over real HTTP: events arrive on a channel.
type sseClient struct {
	t      *testing.T
	resp   *http.Response
	events chan sseEvent
	pings  chan struct{}
	beats  chan sseEvent // heartbeat events: apart, so that a slow test's next event is still its view's
	done   chan struct{} // closed when the body ended
	err    error         // why the body ended; read after done
}

// stream opens GET /v1/stream?query with token in the Authorization header
// (none where empty) and header's other fields; it fails unless 200.
func (e *env) stream(query, token string, header http.Header) *sseClient {
	e.t.Helper()
	return e.streamOf(query, e.tryStream(query, token, header))
}

// streamOf reads resp, the answer to a stream's query; it fails unless 200.
func (e *env) streamOf(query string, resp *http.Response) *sseClient {
	e.t.Helper()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.t.Fatalf("stream %s: %d %s", query, resp.StatusCode, b)
	}
	c := &sseClient{t: e.t, resp: resp, events: make(chan sseEvent, 1000), pings: make(chan struct{}, 1000), beats: make(chan sseEvent, 1000), done: make(chan struct{})}
	go c.read()
	e.t.Cleanup(func() { resp.Body.Close(); <-c.done })
	return c
}

func (e *env) tryStream(query, token string, header http.Header) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+"/v1/stream?"+query, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// read parses the body's events (the text/event-stream format) until it ends.
func (c *sseClient) read() {
	defer close(c.done)
	sc := bufio.NewScanner(c.resp.Body)
	sc.Buffer(nil, 1<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" && ev.Event == "heartbeat":
			select {
			case c.beats <- ev:
			default: // a long test: the oldest are enough
			}
			ev = sseEvent{}
		case line == "":
			if ev.Event != "" || ev.Data != "" {
				c.events <- ev
			}
			ev = sseEvent{}
		case line == ": ping":
			c.pings <- struct{}{}
		case strings.HasPrefix(line, "id: "):
			ev.ID, ev.HasID = line[4:], true
		case strings.HasPrefix(line, "event: "):
			ev.Event = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.Data = line[6:]
		}
	}
	c.err = sc.Err()
}

// next returns the next event, failing after 5 s.
func (c *sseClient) next() sseEvent {
	c.t.Helper()
	select {
	case ev := <-c.events:
		return ev
	case <-c.done:
		select { // events read before the end are still to be taken
		case ev := <-c.events:
			return ev
		default:
		}
		c.t.Fatalf("stream ended (%v) before the next event", c.err)
	case <-time.After(5 * time.Second):
		c.t.Fatal("no event within 5 s")
	}
	return sseEvent{}
}

// msg returns the next event's message, checking that the event's name is
// its type and its id its seq.
func (c *sseClient) msg() wsMsg {
	c.t.Helper()
	ev := c.next()
	m := decode(c.t, []byte(ev.Data))
	if ev.Event != m.Type {
		c.t.Fatalf("event %q carries a %q message", ev.Event, m.Type)
	}
	if want := m.Type == "snapshot" || m.Type == "diff"; ev.HasID != want || want && ev.ID != strconv.FormatUint(m.Seq, 10) {
		c.t.Fatalf("%s event: id %q (set %v), seq %d", m.Type, ev.ID, ev.HasID, m.Seq)
	}
	return m
}

// closeEvent waits for the stream's close event and the body's end.
func (c *sseClient) closeEvent() (code int, reason string) {
	c.t.Helper()
	for {
		ev := c.next()
		if ev.Event != "close" {
			continue
		}
		var v struct {
			Code   int    `json:"code"`
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(ev.Data), &v); err != nil {
			c.t.Fatalf("close event %q: %v", ev.Data, err)
		}
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			c.t.Fatal("the body did not end after the close event")
		}
		if c.err != nil {
			c.t.Fatalf("the body ended badly after the close event: %v", c.err)
		}
		return v.Code, v.Reason
	}
}

// TestStreamSnapshotThenDiffs: a stream's first event is the view's
// snapshot, then each submission's diff, whose prev chains on to the id
// before it; the response is an unbuffered event stream.
func TestStreamSnapshotThenDiffs(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("a", "weekly", hub.Settings{})
	e.submit("a", "weekly", hub.Item{Member: "p1", Score: 10})
	c := e.stream("board=weekly&kind=top&limit=3", e.token("a", auth.RoleRead), nil)
	for k, want := range map[string]string{"Content-Type": "text/event-stream", "X-Accel-Buffering": "no", "Cache-Control": "no-cache"} {
		if got := c.resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	snap := c.msg()
	if snap.Type != "snapshot" || *snap.ID != "stream" || len(snap.Rows) != 1 || snap.Rows[0].Member != "p1" {
		t.Fatalf("first message %+v, want p1's snapshot of id stream", snap)
	}
	seq := snap.Seq
	for i, member := range []string{"p2", "p3"} {
		e.submit("a", "weekly", hub.Item{Member: member, Score: float64(20 + i)})
		d := c.msg()
		if d.Type != "diff" || d.Prev == nil || *d.Prev != seq || d.Rows[0].Member != member || d.Rows[0].Rank != 1 {
			t.Fatalf("after %s: %+v, want a diff from %d with %s first", member, d, seq, member)
		}
		seq = d.Seq
	}
}

// TestStreamResume: Last-Event-ID resumes as since does: a diff from it
// where the gateway knows every change since, a snapshot otherwise, 503
// where it has not applied it (resume.go); it wins over the since parameter
// (an EventSource reconnects with its URL).
func TestStreamResume(t *testing.T) {
	e := newEnv(t, Options{ResumeWait: 200 * time.Millisecond})
	e.putBoard("a", "weekly", hub.Settings{})
	e.submit("a", "weekly", hub.Item{Member: "p1", Score: 10})
	tok := e.token("a", auth.RoleRead)
	c := e.stream("board=weekly&kind=top&limit=3", tok, nil)
	last := c.msg().Seq
	c.resp.Body.Close()
	e.submit("a", "weekly", hub.Item{Member: "p2", Score: 20})
	e.submit("a", "weekly", hub.Item{Member: "p3", Score: 30})

	r := e.stream("board=weekly&kind=top&limit=3&since=1", tok, http.Header{"Last-Event-ID": {fmt.Sprint(last)}})
	// A diff from last: empty where the join came before the submissions'
	// tick, which then follows it; never a gap, never a snapshot.
	for seq, total := last, 1; total < 3; {
		d := r.msg()
		if d.Type != "diff" || *d.Prev != seq {
			t.Fatalf("resumed with %+v, want a diff from %d", d, seq)
		}
		seq, total = d.Seq, d.Total
	}
	// A seq this gateway has not applied: it waits (ResumeWait), then
	// refuses the stream as unavailable, never with its older state.
	ahead := e.tryStream("board=weekly&kind=top&limit=3", tok, http.Header{"Last-Event-ID": {"999999"}})
	body, _ := io.ReadAll(ahead.Body)
	ahead.Body.Close()
	if ahead.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"unavailable"`) {
		t.Fatalf("resumed from a seq not applied here: %d %s, want 503 unavailable", ahead.StatusCode, body)
	}
	resp := e.tryStream("board=weekly&kind=top", tok, http.Header{"Last-Event-ID": {"x"}})
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("Last-Event-ID x: %d, want 400", resp.StatusCode)
	}
}

// TestStreamRefused: what refuses a stream is an HTTP error with api's
// body, before the stream starts.
func TestStreamRefused(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("a", "weekly", hub.Settings{})
	read := e.token("a", auth.RoleRead)
	expired := e.tokenFor("a", auth.RoleRead, "p1", time.Now().Add(-time.Minute))
	cases := []struct {
		name, query, token string
		header             http.Header
		status             int
		code, message      string
	}{
		{"no token", "board=weekly&kind=top", "", nil, 401, "unauthorized", `Authorization: want "Bearer <token>"`},
		{"no token, bad query", "board=weekly&kind=top&limit=x", "", nil, 401, "unauthorized", ""},
		{"expired", "board=weekly&kind=top", expired, nil, 401, "unauthorized", ""},
		{"expired access_token", "board=weekly&kind=top&access_token=" + expired, "", nil, 401, "unauthorized", ""},
		{"write role only", "board=weekly&kind=top", e.token("a", auth.RoleSubmit), nil, 403, "forbidden", ""},
		{"board out of the token's", "board=weekly&kind=top", e.token("a", auth.RoleRead, "daily-*"), nil, 403, "forbidden", ""},
		{"no such board", "board=monthly&kind=top", read, nil, 404, "not_found", ""},
		{"bad limit", "board=weekly&kind=top&limit=1000", read, nil, 400, "bad_request", "limit: 1000 is not in 1..100"},
		{"unknown parameter", "board=weekly&kind=top&view=top", read, nil, 400, "bad_request", "view: not a parameter of /v1/stream"},
		{"both credentials", "board=weekly&kind=top&access_token=" + read, read, nil, 400, "bad_request", ""},
		{"foreign origin", "board=weekly&kind=top", read, http.Header{"Origin": {"https://evil.example"}}, 403, "forbidden", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.tryStream(tc.query, tc.token, tc.header)
			defer resp.Body.Close()
			var body struct {
				Error struct{ Code, Message string }
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatalf("%d: body: %v", resp.StatusCode, err)
			}
			if resp.StatusCode != tc.status || body.Error.Code != tc.code || tc.message != "" && body.Error.Message != tc.message {
				t.Fatalf("%d %+v, want %d %s %q", resp.StatusCode, body.Error, tc.status, tc.code, tc.message)
			}
		})
	}
}

// TestStreamTenants: two tenants with the same board name each see their
// own rows only.
func TestStreamTenants(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("a", "weekly", hub.Settings{})
	e.putBoard("b", "weekly", hub.Settings{})
	e.submit("a", "weekly", hub.Item{Member: "alice", Score: 1})
	e.submit("b", "weekly", hub.Item{Member: "bob", Score: 2})
	a := e.stream("board=weekly&kind=top", e.token("a", auth.RoleRead), nil)
	b := e.stream("board=weekly&kind=top", e.token("b", auth.RoleRead), nil)
	if m := a.msg(); len(m.Rows) != 1 || m.Rows[0].Member != "alice" {
		t.Fatalf("casino-a's stream: %+v", m)
	}
	if m := b.msg(); len(m.Rows) != 1 || m.Rows[0].Member != "bob" {
		t.Fatalf("casino-b's stream: %+v", m)
	}
	e.submit("b", "weekly", hub.Item{Member: "bob2", Score: 3})
	if m := b.msg(); m.Rows[0].Member != "bob2" {
		t.Fatalf("casino-b's diff: %+v", m)
	}
	e.submit("a", "weekly", hub.Item{Member: "alice2", Score: 3})
	if m := a.msg(); m.Type != "diff" || m.Rows[0].Member != "alice2" {
		t.Fatalf("casino-a's next message: %+v, want its own diff (none of casino-b's)", m)
	}
}

// TestStreamCap: streams and WebSockets count against one tenant cap
// (casino-b's is 2); one past it is 429, and a stream that ends gives its
// slot back.
func TestStreamCap(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("b", "weekly", hub.Settings{})
	tok := e.token("b", auth.RoleRead)
	s := e.stream("board=weekly&kind=top", tok, nil)
	s.msg()
	e.dial("access_token="+tok, true, nil)
	checkFor(t, 5*time.Second, func() error {
		if n, _ := e.p.Usage("casino-b"); n != 2 {
			return fmt.Errorf("%d connections, want 2", n)
		}
		return nil
	})
	resp := e.tryStream("board=weekly&kind=top", tok, nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third connection: %d, want 429", resp.StatusCode)
	}
	s.resp.Body.Close()
	checkFor(t, 5*time.Second, func() error {
		if n, _ := e.p.Usage("casino-b"); n != 1 {
			return fmt.Errorf("%d connections after the stream left, want 1", n)
		}
		return nil
	})
	e.stream("board=weekly&kind=top", tok, nil).msg()
}

// TestStreamClose: the stream's close event carries the WebSocket's code
// and reason, at token expiry, key removal and shutdown.
func TestStreamClose(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("a", "weekly", hub.Settings{})
	e.putBoard("b", "weekly", hub.Settings{})
	exp := e.stream("board=weekly&kind=top", e.tokenFor("a", auth.RoleRead, "p1", time.Now().Add(time.Second)), nil)
	if code, reason := exp.closeEvent(); code != 4001 || reason != "token expired" {
		t.Fatalf("at expiry: close %d %q, want 4001", code, reason)
	}
	a := e.stream("board=weekly&kind=top", e.token("a", auth.RoleRead), nil)
	a.msg()
	if _, err := e.reload(reloadedWithout(t)); err != nil {
		t.Fatal(err)
	}
	if code, _ := a.closeEvent(); code != 4003 {
		t.Fatalf("key removed: close %d, want 4003", code)
	}
	b := e.stream("board=weekly&kind=top", e.token("b", auth.RoleRead), nil)
	b.msg()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if code, reason := b.closeEvent(); code != 1001 || reason != "server shutting down" {
		t.Fatalf("at shutdown: close %d %q, want 1001", code, reason)
	}
}

// TestStreamHeartbeat: an idle stream gets a ": ping" comment every ping
// interval.
func TestStreamHeartbeat(t *testing.T) {
	e := newEnv(t, Options{PingInterval: 50 * time.Millisecond})
	e.putBoard("a", "weekly", hub.Settings{})
	c := e.stream("board=weekly&kind=top", e.token("a", auth.RoleRead), nil)
	c.msg()
	for range 2 {
		select {
		case <-c.pings:
		case <-time.After(5 * time.Second):
			t.Fatal("no heartbeat within 5 s")
		}
	}
}

// TestStreamViews: every kind of view is a stream's query, members
// repeated; the rows are the view's.
func TestStreamViews(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("a", "weekly", hub.Settings{})
	for i := 1; i <= 9; i++ {
		e.submit("a", "weekly", hub.Item{Member: fmt.Sprint("p", i), Score: float64(100 - i)})
	}
	tok := e.token("a", auth.RoleRead)
	cases := []struct {
		query string
		want  []string // members by rank
	}{
		{"kind=top&limit=2&offset=1", []string{"p2", "p3"}},
		{"kind=around&member=p5&radius=1", []string{"p4", "p5", "p6"}},
		{"kind=around&radius=0", []string{"p1"}}, // the token's sub
		{"kind=rank&rank=7", []string{"p7"}},
		{"kind=members&members=p9&members=p2", []string{"p2", "p9"}},
	}
	for _, tc := range cases {
		m := e.stream("board=weekly&"+tc.query, tok, nil).msg()
		var got []string
		for _, r := range m.Rows {
			got = append(got, r.Member)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v, want %v", tc.query, got, tc.want)
		}
	}
}
