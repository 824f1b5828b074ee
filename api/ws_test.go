package api

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/rankwire/rankwire/auth"
)

// liveViews are the views the equivalence test watches, each with the HTTP
// read that answers the same view.
var liveViews = []struct {
	id   string
	view map[string]any
	read string
}{
	{"top", map[string]any{"kind": "top", "limit": 5, "offset": 2}, "/top?limit=5&offset=2"},
	{"around", map[string]any{"kind": "around", "member": "p3", "radius": 2}, "/members/p3/around?radius=2"},
	{"mine", map[string]any{"kind": "around", "radius": 1}, "/members/p1/around?radius=1"},
	{"rank", map[string]any{"kind": "rank", "rank": 4}, "/ranks/4"},
	{"friends", map[string]any{"kind": "members", "members": []string{"p1", "p5", "p9", "nobody"}}, "/members?ids=p1,p5,p9,nobody"},
}

// TestWSViewsMatchHTTP: under every policy, a client that applies
// snapshots and diffs holds exactly what the HTTP read of the same view
// answers, after each round of random submissions and removals.
func TestWSViewsMatchHTTP(t *testing.T) {
	e := newLiveEnv(t, Config{})
	adm := e.token("a", admin)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for _, policy := range []string{"best", "latest", "sum", "first"} {
		board := "b-" + policy
		e.must(200, "PUT", "/v1/boards/"+board, adm, `{"policy":"`+policy+`","rules":{"max_score":1000}}`)
		c := e.dial("access_token="+e.tokenFor("a", auth.RoleRead, "p1", time.Now().Add(time.Hour)), true, nil)
		for _, v := range liveViews {
			c.subscribe(v.id, board, v.view)
		}
		for round := range 4 {
			submitRandom(e, r, board, adm)
			for _, v := range liveViews {
				checkFor(t, 5*time.Second, func() error { return sameAsHTTP(e, c, board, v.id, v.read, adm) })
			}
			t.Logf("%s round %d: %d views agree", policy, round, len(liveViews))
		}
	}
}

func submitRandom(e *liveEnv, r *rand.Rand, board, tok string) {
	var items []string
	for range 1 + r.IntN(20) {
		items = append(items, fmt.Sprintf(`{"member":"p%d","score":%d,"subscore":%d}`, r.IntN(15), r.IntN(40), r.IntN(3)))
	}
	e.must(200, "POST", "/v1/boards/"+board+"/scores", tok, `{"scores":[`+strings.Join(items, ",")+`]}`)
	if r.IntN(2) == 0 {
		e.do("DELETE", fmt.Sprintf("/v1/boards/%s/members/p%d", board, r.IntN(15)), tok, "")
	}
	if r.IntN(3) == 0 { // a held submission marks the member's rows as under review
		e.must(200, "POST", "/v1/boards/"+board+"/scores", tok, fmt.Sprintf(`{"member":"p%d","score":5000}`, r.IntN(15)))
	}
	if r.IntN(3) == 0 { // a decision may clear the marker
		held := e.must(200, "GET", "/v1/boards/"+board+"/quarantine", tok, "")["rows"].([]any)
		if len(held) > 0 {
			qid := held[r.IntN(len(held))].(map[string]any)["qid"].(string)
			e.must(200, "POST", "/v1/boards/"+board+"/quarantine/"+qid+"/"+[]string{"approve", "reject"}[r.IntN(2)], tok, "")
		}
	}
	if r.IntN(2) == 0 { // a profile change is a change of every view showing the member
		e.must(200, "PUT", fmt.Sprintf("/v1/members/p%d/profile", r.IntN(15)), tok,
			fmt.Sprintf(`{"name":"Player %d","country":"%s"}`, r.IntN(1000), []string{"MT", "GB", "DE"}[r.IntN(3)]))
	}
}

// sameAsHTTP compares a subscription's state with the HTTP read; a 404
// (no such member or rank) reads as no rows.
func sameAsHTTP(e *liveEnv, c *wsClient, board, id, read, tok string) error {
	status, out := e.do("GET", "/v1/boards/"+board+read, tok, "")
	want := map[int]rowJSON{}
	if status == http.StatusOK {
		want = asRows(out)
	}
	got, ok := c.rows(id)
	if !ok || !maps.Equal(got, want) {
		return fmt.Errorf("%s: client holds %v, HTTP %s reads %v", id, got, read, want)
	}
	return nil
}

// TestWSResume: a client that reconnects with since gets a diff whose prev
// is since, and its old state plus that diff is the view.
func TestWSResume(t *testing.T) {
	e := newLiveEnv(t, Config{})
	adm := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/weekly", adm, `{}`)
	e.must(200, "POST", "/v1/boards/weekly/scores", adm, `{"scores":[{"member":"p1","score":10},{"member":"p2","score":20}]}`)
	tok := "access_token=" + e.token("a", auth.RoleRead)
	c := e.dial(tok, true, nil)
	view := map[string]any{"kind": "top", "limit": 3}
	c.subscribe("s1", "weekly", view)
	checkFor(t, 5*time.Second, func() error { return sameAsHTTP(e, c, "weekly", "s1", "/top?limit=3", adm) })
	e.must(200, "POST", "/v1/boards/weekly/scores", adm, `{"member":"p3","score":15}`)
	checkFor(t, 5*time.Second, func() error { return sameAsHTTP(e, c, "weekly", "s1", "/top?limit=3", adm) })
	old, _ := c.rows("s1")
	since := c.lastSeq("s1")
	c.c.Close(websocket.StatusNormalClosure, "")

	e.must(200, "POST", "/v1/boards/weekly/scores", adm, `{"scores":[{"member":"p4","score":30},{"member":"p1","score":1}]}`)
	c2 := e.dial(tok, false, nil)
	c2.send(map[string]any{"type": "subscribe", "id": "s1", "board": "weekly", "view": view, "since": since})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, data, err := c2.c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), `{"type":"diff","id":"s1",`) || !strings.Contains(string(data), fmt.Sprintf(`"prev":%d`, since)) {
		t.Fatalf("resume answered %s, want a diff with prev %d", data, since)
	}
	c2.state["s1"], c2.seq["s1"] = old, since
	c2.apply(decode(t, data), data)
	// The resume diff brings the view to some seq after since; changes the
	// feed had not ticked out yet arrive in the next diffs of the chain.
	for sameAsHTTP(e, c2, "weekly", "s1", "/top?limit=3", adm) != nil {
		_, data, err := c2.c.Read(ctx)
		if err != nil {
			t.Fatalf("resumed view never matched HTTP: %v", sameAsHTTP(e, c2, "weekly", "s1", "/top?limit=3", adm))
		}
		c2.apply(decode(t, data), data)
	}
	if c2.bad != nil {
		t.Fatal(c2.bad)
	}
}

// TestWSTokenExpiryAndRefresh: a token that expires closes the connection
// with 4001; a refresh by a later auth message keeps it open.
func TestWSTokenExpiryAndRefresh(t *testing.T) {
	e := newLiveEnv(t, Config{})
	e.must(200, "PUT", "/v1/boards/weekly", e.token("a", admin), `{}`)
	// The refreshed connection's first token expires 300 ms before the
	// other's: once the other is closed, a failed refresh would have closed it.
	soon := time.Now().Add(1200 * time.Millisecond)
	refreshed := e.dial("access_token="+e.tokenFor("a", auth.RoleRead, "p1", soon), true, nil)
	expiring := e.dial("access_token="+e.tokenFor("a", auth.RoleRead, "p1", soon.Add(300*time.Millisecond)), true, nil)
	refreshed.send(map[string]any{"type": "auth", "token": e.tokenFor("a", auth.RoleRead, "p1", time.Now().Add(time.Hour))})
	if code := expiring.waitClosed(5 * time.Second); code != closeExpired {
		t.Fatalf("expired connection closed with %d, want %d", code, closeExpired)
	}
	refreshed.subscribe("s1", "weekly", map[string]any{"kind": "top"})
	checkFor(t, 5*time.Second, func() error {
		if _, ok := refreshed.rows("s1"); !ok {
			return fmt.Errorf("no snapshot on the refreshed connection")
		}
		return nil
	})
}

// TestWSAuthMessage: a bare connection authenticates with its first
// message; none in time closes 4001; a token that may not connect, 4003.
func TestWSAuthMessage(t *testing.T) {
	e := newLiveEnv(t, Config{AuthTimeout: 300 * time.Millisecond})
	e.must(200, "PUT", "/v1/boards/weekly", e.token("a", admin), `{}`)
	c := e.dial("", true, nil)
	c.send(map[string]any{"type": "auth", "token": e.token("a", auth.RoleRead)})
	c.subscribe("s1", "weekly", map[string]any{"kind": "top"})
	checkFor(t, 5*time.Second, func() error {
		if _, ok := c.rows("s1"); !ok {
			return fmt.Errorf("no snapshot after auth message")
		}
		return nil
	})
	if code := e.dial("", true, nil).waitClosed(5 * time.Second); code != closeExpired {
		t.Fatalf("silent connection closed with %d, want %d", code, closeExpired)
	}
	if code := e.dial("access_token="+e.token("a", auth.RoleSubmit), true, nil).waitClosed(5 * time.Second); code != closeForbidden {
		t.Fatalf("submit-only token closed with %d, want %d", code, closeForbidden)
	}
	if code := e.dial("access_token=garbage", true, nil).waitClosed(5 * time.Second); code != closeForbidden {
		t.Fatalf("bad token closed with %d, want %d", code, closeForbidden)
	}
}

// TestWSRefusals: another tenant's board, a board outside the token's
// patterns, malformed messages and over-limit views are answered with
// error messages, and the connection keeps serving.
func TestWSRefusals(t *testing.T) {
	e := newLiveEnv(t, Config{})
	e.must(200, "PUT", "/v1/boards/weekly", e.token("a", admin), `{}`)
	e.must(200, "PUT", "/v1/boards/slots-1", e.token("b", admin), `{}`)
	c := e.dial("access_token="+e.token("b", auth.RoleRead, "slots-*"), true, nil)
	sends := []struct{ msg, code string }{
		{`{"type":"subscribe","id":"x1","board":"slots-2","view":{"kind":"top"}}`, "not_found"},
		{`{"type":"subscribe","id":"x2","board":"weekly","view":{"kind":"top"}}`, "forbidden"},
		{`not json`, "bad_request"},
		{`{"type":"hello"}`, "bad_request"},
		{`{"type":"subscribe","id":"x3","board":"slots-1","view":{"kind":"top","limit":1000}}`, "bad_request"},
		{`{"type":"subscribe","id":"x4","board":"slots-1","view":{"kind":"around","radius":51,"member":"p"}}`, "bad_request"},
		{`{"type":"subscribe","id":"x5","board":"slots-1","view":{"kind":"sideways"}}`, "bad_request"},
		{`{"type":"subscribe","id":"x6","board":"slots-1","view":{"kind":"top","limit":"ten"}}`, "bad_request"},
		{`{"type":"subscribe","board":"slots-1","view":{"kind":"top"}}`, "bad_request"},
		{`{"type":"unsubscribe","id":"nope"}`, "not_found"},
		{`{"type":"auth","token":"garbage"}`, "unauthorized"},
	}
	for _, s := range sends {
		c.send(s.msg)
	}
	c.send(`{"type":"subscribe","id":"ok","board":"slots-1","view":{"kind":"top"}}`)
	c.send(`{"type":"subscribe","id":"ok","board":"slots-1","view":{"kind":"top"}}`)
	checkFor(t, 5*time.Second, func() error {
		if n := len(c.errorsSeen()); n < len(sends)+1 {
			return fmt.Errorf("%d errors, want %d", n, len(sends)+1)
		}
		return nil
	})
	errs := c.errorsSeen()
	for i, s := range sends {
		if errs[i].Code != s.code || errs[i].Message == "" {
			t.Errorf("%s: answered %+v, want code %s", s.msg, errs[i], s.code)
		}
	}
	if last := errs[len(sends)]; last.Code != "conflict" {
		t.Errorf("duplicate id answered %+v, want conflict", last)
	}
	if _, ok := c.rows("ok"); !ok {
		t.Fatal("no snapshot for the valid subscription")
	}
}

// TestWSLimits: a tenant past its connection cap is accepted and closed
// at once with 4029; a connection holds at most MaxSubscriptions; origins
// other than the host and the allowed ones are accepted and closed 4003
// before a byte of data.
func TestWSLimits(t *testing.T) {
	e := newLiveEnv(t, Config{AllowedOrigins: []string{"games.example"}})
	e.must(200, "PUT", "/v1/boards/slots-1", e.token("b", admin), `{}`)
	tok := "access_token=" + e.token("b", auth.RoleRead)
	c := e.dial(tok, true, nil)
	e.dial(tok, true, nil)
	third := e.dial(tok, true, nil)
	if code := third.waitClosed(5 * time.Second); code != closeOverLimit {
		t.Fatalf("third connection of casino-b closed with %d, want %d", code, closeOverLimit)
	}
	for i := range MaxSubscriptions + 1 {
		c.subscribe(fmt.Sprint("s", i), "slots-1", map[string]any{"kind": "rank", "rank": i + 1})
	}
	checkFor(t, 5*time.Second, func() error {
		if errs := c.errorsSeen(); len(errs) != 1 || !strings.Contains(errs[0].Message, "at most 100") {
			return fmt.Errorf("errors %+v, want one over the limit", errs)
		}
		return nil
	})
	atok := "access_token=" + e.token("a", auth.RoleRead)
	evil := &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}}
	if code := e.dial(atok, true, evil).waitClosed(5 * time.Second); code != closeForbidden {
		t.Fatalf("a foreign origin closed with %d, want %d", code, closeForbidden)
	}
	good := &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://games.example"}}}
	c2, err := e.tryDial(atok, good)
	if err != nil {
		t.Fatalf("an allowed origin: %v", err)
	}
	c2.CloseNow()
}

// TestWSSlowClient: a client that never reads holds at most one pending
// message per subscription on the server while another client stays on
// time, and is closed once bytes waited unsent past the slow timeout. The
// stalled client watches 50 distinct top-100 views so that its socket
// fills fast.
func TestWSSlowClient(t *testing.T) {
	e := newLiveEnv(t, Config{SlowTimeout: 500 * time.Millisecond})
	adm := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/weekly", adm, `{"policy":"latest"}`)
	tok := "access_token=" + e.token("a", auth.RoleRead)
	view := map[string]any{"kind": "top", "limit": 100}
	const views = 50
	slow := e.dial(tok, false, smallReadBuffer())
	for i := range views {
		slow.subscribe(fmt.Sprint("s", i), "weekly", map[string]any{"kind": "top", "limit": 100, "offset": i})
	}
	fast := e.dial(tok, true, nil)
	fast.subscribe("s", "weekly", view)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; testutil.ToFloat64(e.s.live.metrics.slowCloses) == 0; i++ {
		if i > 1000 {
			var d1, d2 dto.Metric
			e.s.live.metrics.messages.Write(&d1)
			e.s.live.metrics.bytes.Write(&d2)
			t.Fatalf("the stalled client was never closed: %v messages %v bytes", d1.GetCounter().GetValue(), d2.GetCounter().GetValue())
		}
		var items []string
		for range 100 {
			items = append(items, fmt.Sprintf(`{"member":"player-with-a-long-name-%d","score":%d}`, r.IntN(200), r.IntN(1e6)))
		}
		e.must(200, "POST", "/v1/boards/weekly/scores", adm, `{"scores":[`+strings.Join(items, ",")+`]}`)
		for c := range e.s.live.connections() {
			if n := c.out.Len(); n > views {
				t.Fatalf("a connection holds %d pending messages, want at most one per subscription", n)
			}
		}
		if i%10 == 0 {
			checkFor(t, 5*time.Second, func() error { return sameAsHTTP(e, fast, "weekly", "s", "/top?limit=100", adm) })
		}
	}
}

// TestCloseWebSockets: shutdown closes every WebSocket with 1001 and
// refuses new ones.
func TestCloseWebSockets(t *testing.T) {
	e := newLiveEnv(t, Config{})
	c := e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
	checkFor(t, 5*time.Second, func() error {
		if len(e.s.live.connections()) != 1 {
			return fmt.Errorf("connection not registered yet")
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.s.CloseWebSockets(ctx); err != nil {
		t.Fatal(err)
	}
	if code := c.waitClosed(5 * time.Second); code != closeGoingAway {
		t.Fatalf("closed with %d, want %d", code, closeGoingAway)
	}
}
