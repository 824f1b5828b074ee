package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rankwire/rankwire/auth"
)

// shown is a row as the element shows it.
type shown struct {
	Rank    int     `json:"rank"`
	Member  string  `json:"member"`
	Name    string  `json:"name"`
	Avatar  string  `json:"avatar"`
	Review  string  `json:"review"`
	Prize   *string `json:"prize"`
	Score   float64 `json:"score"`
	Me      bool    `json:"me"`
	Current bool    `json:"current"`
	BG      string  `json:"bg"`
}

// seen is what one board shows: window.seen in testdata/e2e.html.
type seen struct {
	State     string  `json:"state"`
	Status    string  `json:"status"`
	Live      string  `json:"live"`
	Countdown string  `json:"countdown"`
	PrizeHead bool    `json:"prizeHead"`
	Rows      []shown `json:"rows"`
}

// row is a row as the HTTP API reads it.
type row struct {
	Rank   int     `json:"rank"`
	Member string  `json:"member"`
	Score  float64 `json:"score"`
}

// page opens the test page on g in a fresh browser.
func page(t *testing.T, g *gateway) context.Context {
	t.Helper()
	return openPage(t, g, browser(t, 1024, 800))
}

// openPage opens the test page on g in the browser of ctx.
func openPage(t *testing.T, g *gateway, ctx context.Context) context.Context {
	t.Helper()
	return openPageAt(t, ctx, g.url("/demo/e2e.html"))
}

// openPageAt opens the test page at u (on g or behind a proxy of it) in
// the browser of ctx and waits until it is ready.
func openPageAt(t *testing.T, ctx context.Context, u string) context.Context {
	t.Helper()
	do(t, ctx, chromedp.Navigate(u))
	waitFor(t, "test page ready", 10*time.Second, func() string {
		if js[bool](t, ctx, `window.ready === true`) {
			return ""
		}
		return "window.ready unset"
	})
	return ctx
}

func mount(t *testing.T, ctx context.Context, id string, attrs map[string]string) {
	t.Helper()
	a, _ := json.Marshal(attrs)
	js[bool](t, ctx, fmt.Sprintf("mount(%q, %s)", id, a))
}

func look(t *testing.T, ctx context.Context, id string) seen {
	t.Helper()
	return js[seen](t, ctx, fmt.Sprintf("seen(%q)", id))
}

// sameRows compares what the element shows with what HTTP reads: "" where equal.
func sameRows(got []shown, want []row) string {
	g := make([]row, len(got))
	for i, r := range got {
		g[i] = row{r.Rank, r.Member, r.Score}
	}
	if len(want) == 0 && len(g) == 0 || reflect.DeepEqual(g, want) {
		return ""
	}
	return fmt.Sprintf("shows %v, HTTP reads %v", g, want)
}

// board creates board name on g with members p1..pn, pi scoring i*10.
func board(g *gateway, name string, n int) {
	g.call("PUT", "/v1/boards/"+name, `{"policy":"latest"}`, nil)
	var items []string
	for i := 1; i <= n; i++ {
		items = append(items, fmt.Sprintf(`{"member":"p%d","score":%d}`, i, i*10))
	}
	g.call("POST", "/v1/boards/"+name+"/scores", `{"scores":[`+strings.Join(items, ",")+`]}`, nil)
}

func (g *gateway) rows(path string) []row {
	var page struct{ Rows []row }
	g.call("GET", path, "", &page)
	return page.Rows
}

func readToken(g *gateway, sub string) string {
	return g.token(sub, auth.RoleRead, time.Now().Add(time.Hour))
}

// TestClientUnits runs the client's unit tests (testdata/client_test.mjs)
// in Chromium: the protocol logic, and the client against a fake socket.
func TestClientUnits(t *testing.T) {
	g := startGateway(t)
	ctx := page(t, g)
	res := js[struct {
		Passed   int
		Failures []string
	}](t, ctx, `unit()`)
	for _, f := range res.Failures {
		t.Error(f)
	}
	if res.Passed == 0 {
		t.Fatal("no unit test ran")
	}
	t.Logf("%d JavaScript unit tests passed", res.Passed)
}

// TestBoardRendersSnapshot: a top-10 board shows the board's top 10, in a
// real table, with the total, in the live state.
func TestBoardRendersSnapshot(t *testing.T) {
	g := startGateway(t)
	board(g, "slots", 30)
	ctx := page(t, g)
	mount(t, ctx, "top", map[string]string{"board": "slots", "token": readToken(g, "p1"), "limit": "10", "locale": "en-US"})
	want := g.rows("/v1/boards/slots/top?limit=10")
	waitFor(t, "snapshot shown", 10*time.Second, func() string {
		s := look(t, ctx, "top")
		if s.State != "live" {
			return "state " + s.State + " " + s.Status
		}
		return sameRows(s.Rows, want)
	})
	caption := js[string](t, ctx, `document.getElementById("top").shadowRoot.querySelector("table caption").textContent`)
	if !strings.Contains(caption, "30 players") {
		t.Errorf("caption %q lacks the total", caption)
	}
}

// TestBoardFollowsSubmissions: four views (top, around, rank, members) fed
// random submissions show, once quiet, exactly what HTTP reads of them.
func TestBoardFollowsSubmissions(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("RANKWIRE_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (RANKWIRE_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	g := startGateway(t)
	board(g, "slots", 40)
	ctx := page(t, g)
	tok := readToken(g, "p7")
	views := map[string]struct {
		attrs map[string]string
		read  string
	}{
		"top":     {map[string]string{"limit": "10"}, "/v1/boards/slots/top?limit=10"},
		"page2":   {map[string]string{"limit": "5", "offset": "5"}, "/v1/boards/slots/top?limit=5&offset=5"},
		"around":  {map[string]string{"view": "around", "radius": "3"}, "/v1/boards/slots/members/p7/around?radius=3"},
		"rank":    {map[string]string{"view": "rank", "rank": "5"}, ""},
		"friends": {map[string]string{"view": "members", "members": "p1,p2,p3,p55"}, "/v1/boards/slots/members?ids=p1,p2,p3,p55"},
	}
	for id, v := range views {
		attrs := map[string]string{"board": "slots", "token": tok, "locale": "en-US"}
		for k, val := range v.attrs {
			attrs[k] = val
		}
		mount(t, ctx, id, attrs)
	}
	check := func() {
		t.Helper()
		for id, v := range views {
			waitFor(t, id+" equals its HTTP read", 15*time.Second, func() string {
				var want []row
				if v.read == "" {
					var r row
					g.call("GET", "/v1/boards/slots/ranks/5", "", &r)
					want = []row{r}
				} else {
					want = g.rows(v.read)
				}
				return sameRows(look(t, ctx, id).Rows, want)
			})
		}
	}
	check()
	for round := range 6 {
		var items []string
		for range 30 {
			items = append(items, fmt.Sprintf(`{"member":"p%d","score":%d}`, 1+rng.IntN(60), rng.IntN(1000)))
		}
		g.call("POST", "/v1/boards/slots/scores", `{"scores":[`+strings.Join(items, ",")+`]}`, nil)
		if round == 2 {
			check()
		}
	}
	check()
}

// TestBoardRecoversAfterRestart: the gateway shuts down (1001) and comes
// back on the same address and data; the board shows reconnecting, then
// resumes and follows new submissions.
func TestBoardRecoversAfterRestart(t *testing.T) {
	g := startGateway(t)
	board(g, "slots", 12)
	ctx := page(t, g)
	mount(t, ctx, "top", map[string]string{"board": "slots", "token": readToken(g, "p1"), "limit": "5", "locale": "en-US"})
	waitFor(t, "live", 10*time.Second, func() string { return sameRows(look(t, ctx, "top").Rows, g.rows("/v1/boards/slots/top?limit=5")) })

	g.Stop()
	waitFor(t, "reconnecting", 10*time.Second, func() string {
		if s := look(t, ctx, "top"); s.State != "reconnecting" {
			return "state " + s.State
		}
		return ""
	})
	if rows := look(t, ctx, "top").Rows; len(rows) != 5 {
		t.Errorf("while reconnecting the board shows %d rows, want the last 5 it had", len(rows))
	}
	g.Start()
	g.call("POST", "/v1/boards/slots/scores", `{"member":"newcomer","score":99999}`, nil)
	waitFor(t, "resumed after restart", 20*time.Second, func() string {
		s := look(t, ctx, "top")
		if s.State != "live" {
			return "state " + s.State
		}
		return sameRows(s.Rows, g.rows("/v1/boards/slots/top?limit=5"))
	})
}

// TestBoardRefusedToken: a garbage or a read-less token is refused with
// close 4003: the element shows "Access refused" with the gateway's reason,
// emits rankwire-error and a rankwire-state event with the code, and stays
// there (no reconnect).
func TestBoardRefusedToken(t *testing.T) {
	g := startGateway(t)
	board(g, "slots", 3)
	ctx := page(t, g)
	tokens := map[string]string{
		"garbage": "not.a.token",
		"no-read": g.token("p1", auth.RoleSubmit, time.Now().Add(time.Hour)),
	}
	for id, tok := range tokens {
		mount(t, ctx, id, map[string]string{"board": "slots", "token": tok})
	}
	for id := range tokens {
		waitFor(t, id+" shows access refused", 10*time.Second, func() string {
			s := look(t, ctx, id)
			if s.State != "error" || !strings.HasPrefix(s.Status, "Access refused: ") || len(s.Status) <= len("Access refused: ") || len(s.Rows) != 0 {
				return fmt.Sprintf("%+v", s)
			}
			return ""
		})
		if n := js[int](t, ctx, fmt.Sprintf(`events.filter(e => e.id === %q && e.type === "rankwire-error").length`, id)); n == 0 {
			t.Errorf("%s: no rankwire-error event", id)
		}
		if n := js[int](t, ctx, fmt.Sprintf(`events.filter(e => e.id === %q && e.type === "rankwire-state" && e.state === "error" && e.code === "forbidden").length`, id)); n != 1 {
			t.Errorf("%s: %d rankwire-state error events with code forbidden, want 1", id, n)
		}
	}
	for id := range tokens {
		if s := look(t, ctx, id); s.State != "error" {
			t.Errorf("%s left the error state: %+v", id, s)
		}
	}
}

// TestBoardExpiredTokenAsksThePage: a token that expired is closed with
// 4001; the element says so, emits rankwire-token-expired, and goes live
// once the page sets a new token attribute.
func TestBoardExpiredTokenAsksThePage(t *testing.T) {
	g := startGateway(t)
	board(g, "slots", 3)
	ctx := page(t, g)
	mount(t, ctx, "exp", map[string]string{"board": "slots", "token": g.token("p1", auth.RoleRead, time.Now().Add(-time.Hour))})
	waitFor(t, "expired state", 10*time.Second, func() string {
		s := look(t, ctx, "exp")
		if s.State != "expired" || !strings.HasPrefix(s.Status, "Session expired") {
			return fmt.Sprintf("%+v", s)
		}
		return ""
	})
	if n := js[int](t, ctx, `events.filter(e => e.id === "exp" && e.type === "rankwire-token-expired").length`); n != 1 {
		t.Fatalf("%d rankwire-token-expired events, want 1", n)
	}
	js[bool](t, ctx, fmt.Sprintf(`setAttr("exp", "token", %q)`, readToken(g, "p1")))
	waitLiveTop10(t, ctx, g, "exp", "live with the new token", 10*time.Second)
}

// TestBoardSaysWhatToCheck: a gateway that cannot be reached (a closed
// port) leaves the element reconnecting, and after a few failed tries its
// status says what to check instead of "Reconnecting…" forever.
func TestBoardSaysWhatToCheck(t *testing.T) {
	g := startGateway(t)
	ctx := page(t, g)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close() // nothing listens there now: every attempt fails at once
	mount(t, ctx, "nowhere", map[string]string{"board": "slots", "token": readToken(g, "p1"), "url": "http://" + closed})
	waitFor(t, "the hint on screen", 15*time.Second, func() string {
		s := look(t, ctx, "nowhere")
		if s.State != "reconnecting" || !strings.Contains(s.Status, "allowed origins") {
			return fmt.Sprintf("%+v", s)
		}
		return ""
	})
	if n := js[int](t, ctx, `events.filter(e => e.id === "nowhere" && e.type === "rankwire-state" && e.hint !== "").length`); n == 0 {
		t.Error("no rankwire-state event carries the hint")
	}
}

// TestViewerRowHighlighted: the token's own member is marked and coloured in
// an around view, and its rank change is announced politely.
func TestViewerRowHighlighted(t *testing.T) {
	g := startGateway(t)
	board(g, "slots", 20)
	ctx := page(t, g)
	mount(t, ctx, "me", map[string]string{"board": "slots", "token": readToken(g, "p10"), "view": "around", "radius": "2", "locale": "en-US"})
	waitFor(t, "around p10 shown", 10*time.Second, func() string {
		return sameRows(look(t, ctx, "me").Rows, g.rows("/v1/boards/slots/members/p10/around?radius=2"))
	})
	s := look(t, ctx, "me")
	var mine []shown
	for _, r := range s.Rows {
		if r.Me {
			mine = append(mine, r)
		} else if r.BG == "" {
			t.Errorf("row %s has no background", r.Member)
		}
	}
	if len(mine) != 1 || mine[0].Member != "p10" || !mine[0].Current {
		t.Fatalf("highlighted rows %+v, want p10 alone with aria-current", mine)
	}
	for _, r := range s.Rows {
		if !r.Me && r.BG == mine[0].BG {
			t.Errorf("row %s has the viewer's background %s", r.Member, r.BG)
		}
	}
	g.call("POST", "/v1/boards/slots/scores", `{"member":"p10","score":5000}`, nil)
	waitFor(t, "rank change announced", 10*time.Second, func() string {
		if s := look(t, ctx, "me"); !strings.Contains(s.Live, "Your rank is now 1, up 10") {
			return fmt.Sprintf("live region %q", s.Live)
		}
		return ""
	})
}

// TestBoardRefusedOrigin: a page whose origin the gateway does not allow is
// refused with close 4003, and the element says so on screen with the
// gateway's reason, once, without retrying. The allowed-origins pattern
// "127.0.0.1" does not let in a page of 127.0.0.1:port (a port is part of
// the host); the pattern "127.0.0.1:<port>" does.
func TestBoardRefusedOrigin(t *testing.T) {
	g := startGateway(t) // serves the page: its origin is http://127.0.0.1:<g's port>
	_, pagePort, _ := net.SplitHostPort(g.Addr)
	portless := startGatewayWith(t, gatewayOpts{origins: []string{"127.0.0.1"}})
	withPort := startGatewayWith(t, gatewayOpts{origins: []string{"127.0.0.1:" + pagePort}})
	board(portless, "slots", 3)
	board(withPort, "slots", 3)
	ctx := page(t, g)
	origin := "http://" + g.Addr
	mount(t, ctx, "refused", map[string]string{"board": "slots", "token": readToken(g, "p1"), "url": portless.url("")})
	mount(t, ctx, "allowed", map[string]string{"board": "slots", "token": readToken(g, "p1"), "url": withPort.url("")})
	waitFor(t, "access refused on screen, with the origin", 10*time.Second, func() string {
		if s := look(t, ctx, "refused"); s.State != "error" || s.Status != "Access refused: origin refused: "+origin || len(s.Rows) != 0 {
			return fmt.Sprintf("%+v", s)
		}
		return ""
	})
	waitLiveTop10(t, ctx, withPort, "allowed", "the allowed origin live", 10*time.Second)
	n := js[int](t, ctx, `events.filter(e => e.id === "refused" && e.type === "rankwire-state" && e.state === "error" && e.code === "forbidden").length`)
	if n != 1 {
		t.Errorf("%d rankwire-state error events with code forbidden, want 1", n)
	}
	if n := js[int](t, ctx, `events.filter(e => e.id === "refused" && e.type === "rankwire-state" && e.state === "reconnecting").length`); n != 0 {
		t.Errorf("the refused element went reconnecting %d times, want never", n)
	}
}

// TestBoardOverConnectionCap: with casino-a capped at one WebSocket, a
// second element (its own connection) is closed 4029: it stays
// reconnecting, says it is busy with the gateway's reason and the close
// code, without the cannot-connect hint, and comes no faster than the 1 s
// backoff allows; once the first element is gone it goes live.
func TestBoardOverConnectionCap(t *testing.T) {
	g := startGatewayWith(t, gatewayOpts{connections: 1})
	board(g, "slots", 3)
	ctx := page(t, g)
	mount(t, ctx, "first", map[string]string{"board": "slots", "token": readToken(g, "p1")})
	waitFor(t, "first live", 10*time.Second, func() string {
		if s := look(t, ctx, "first"); s.State != "live" {
			return fmt.Sprintf("%+v", s)
		}
		return ""
	})
	mount(t, ctx, "second", map[string]string{"board": "slots", "token": readToken(g, "p2")})
	waitFor(t, "second busy", 10*time.Second, func() string {
		if s := look(t, ctx, "second"); s.State != "reconnecting" || !strings.HasPrefix(s.Status, "Busy") || !strings.Contains(s.Status, "connection cap") {
			return fmt.Sprintf("%+v", s)
		}
		return ""
	})
	// Three refusals take at least 0.75 + 1.5 s after the first (the
	// backoff's lowest draws), and the element still says busy, not
	// "cannot connect": the gateway answered and said why.
	first := time.Now()
	waitFor(t, "a third 4029", 20*time.Second, func() string {
		if n := g.closes(4029); n < 3 {
			return fmt.Sprintf("%v closes with 4029", n)
		}
		return ""
	})
	if took := time.Since(first); took < 2*time.Second {
		t.Errorf("three 4029 refusals within %v: the backoff is not 1 s doubling", took)
	}
	if s := look(t, ctx, "second"); s.State != "reconnecting" || !strings.HasPrefix(s.Status, "Busy") {
		t.Errorf("after three refusals at the cap the element shows %+v, want still busy", s)
	}
	if n := js[int](t, ctx, `events.filter(e => e.id === "second" && e.type === "rankwire-state" && e.code === 4029 && e.hint === "").length`); n == 0 {
		t.Error("no rankwire-state event with code 4029 and no hint")
	}
	if n := js[int](t, ctx, `events.filter(e => e.id === "second" && e.hint !== "").length`); n != 0 {
		t.Errorf("%d events of the capped element carry the cannot-connect hint, want 0", n)
	}
	js[bool](t, ctx, `(document.getElementById("first").remove(), true)`)
	waitLiveTop10(t, ctx, g, "second", "second live once the first left", 20*time.Second)
}

// TestBoardFailsOverOn1001: an element given two gateways follows the
// second when the first shuts down (1001): it goes live there at once
// (no "cannot connect") and follows its submissions.
func TestBoardFailsOverOn1001(t *testing.T) {
	a := startGateway(t) // serves the page
	_, pagePort, _ := net.SplitHostPort(a.Addr)
	b := startGatewayWith(t, gatewayOpts{origins: []string{"127.0.0.1:" + pagePort}})
	board(a, "slots", 12)
	board(b, "slots", 12)
	ctx := page(t, a)
	mount(t, ctx, "top", map[string]string{"board": "slots", "token": readToken(a, "p1"), "limit": "5", "url": a.url("") + " " + b.url("")})
	waitFor(t, "live on the first", 10*time.Second, func() string { return sameRows(look(t, ctx, "top").Rows, a.rows("/v1/boards/slots/top?limit=5")) })
	b.call("POST", "/v1/boards/slots/scores", `{"member":"only-on-b","score":99999}`, nil)

	a.Stop()
	waitFor(t, "live on the second", 10*time.Second, func() string {
		s := look(t, ctx, "top")
		if s.State != "live" {
			return fmt.Sprintf("%+v", s)
		}
		return sameRows(s.Rows, b.rows("/v1/boards/slots/top?limit=5"))
	})
	if n := js[int](t, ctx, `events.filter(e => e.id === "top" && e.hint !== "").length`); n != 0 {
		t.Errorf("%d events carry the cannot-connect hint during a failover, want 0", n)
	}
}

// TestBoardTooLarge: a view whose subscribe message is over 64 KiB (a
// members list of 5,000 ids) is closed 1009: the element shows an error
// with code too_large and does not reconnect.
func TestBoardTooLarge(t *testing.T) {
	g := startGateway(t)
	board(g, "slots", 3)
	ctx := page(t, g)
	ids := make([]string, 5000)
	for i := range ids {
		ids[i] = fmt.Sprintf("member-%08d", i)
	}
	mount(t, ctx, "big", map[string]string{"board": "slots", "token": readToken(g, "p1"), "view": "members", "members": strings.Join(ids, ",")})
	waitFor(t, "the too-large error", 10*time.Second, func() string {
		if s := look(t, ctx, "big"); s.State != "error" || !strings.Contains(s.Status, "64 KiB") {
			return fmt.Sprintf("state %s status %q", s.State, s.Status)
		}
		return ""
	})
	if n := js[int](t, ctx, `events.filter(e => e.id === "big" && e.type === "rankwire-state" && e.state === "error" && e.code === "too_large").length`); n != 1 {
		t.Errorf("%d error state events with code too_large, want 1", n)
	}
	if n := g.closes(1009); n != 1 {
		t.Errorf("the gateway closed %v connections with 1009, want 1 (no reconnect)", n)
	}
}

// waitLiveTop10 waits until element id is live and shows g's slots top 10.
func waitLiveTop10(t *testing.T, ctx context.Context, g *gateway, id, what string, timeout time.Duration) {
	t.Helper()
	waitFor(t, what, timeout, func() string {
		s := look(t, ctx, id)
		if s.State != "live" {
			return fmt.Sprintf("%+v", s)
		}
		return sameRows(s.Rows, g.rows("/v1/boards/slots/top?limit=10"))
	})
}

// TestBoardTournamentStates: a tournament board shows profile names and
// avatars, the prize column, the countdown to its end, a quiet marker on a
// member under review (gone once the submission is decided), and turns
// final once the end passed, keeping its rows; a plain board shows none of
// it.
func TestBoardTournamentStates(t *testing.T) {
	g := startGateway(t)
	ends := time.Now().Add(9 * time.Second).UTC().Format(time.RFC3339Nano) // room for a slow start before the end
	g.call("PUT", "/v1/boards/cup", `{"ends_at":"`+ends+`","prizes":[{"from":1,"to":1,"prize":"€100"},{"from":2,"to":3,"prize":"€10"}],"rules":{"max_score":1000}}`, nil)
	g.call("POST", "/v1/boards/cup/scores", `{"scores":[{"member":"p1","score":300},{"member":"p2","score":200},{"member":"p3","score":100},{"member":"p4","score":50}]}`, nil)
	g.call("PUT", "/v1/members/p1/profile", `{"name":"GoldenAce","avatar":"https://cdn.example/a.png","country":"MT"}`, nil)
	g.call("POST", "/v1/boards/cup/scores", `{"member":"p2","score":99999}`, nil) // held: p2 under review
	board(g, "plain", 3)
	ctx := page(t, g)
	mount(t, ctx, "cup", map[string]string{"board": "cup", "token": readToken(g, "p4"), "locale": "en-US"})
	mount(t, ctx, "plain", map[string]string{"board": "plain", "token": readToken(g, "p4"), "locale": "en-US"})
	waitFor(t, "the tournament board's rows", 10*time.Second, func() string {
		s := look(t, ctx, "cup")
		if len(s.Rows) != 4 || s.State != "live" {
			return fmt.Sprintf("%+v", s)
		}
		return ""
	})
	s := look(t, ctx, "cup")
	want := []struct{ member, name, prize, review string }{
		{"p1", "GoldenAce", "€100", ""}, {"p2", "p2", "€10", "Under review"}, {"p3", "p3", "€10", ""}, {"p4", "p4", "", ""},
	}
	for i, w := range want {
		r := s.Rows[i]
		if r.Member != w.member || r.Name != w.name || r.Prize == nil || *r.Prize != w.prize || r.Review != w.review {
			t.Errorf("row %d: %+v, want %+v", i+1, r, w)
		}
	}
	if s.Rows[0].Avatar != "https://cdn.example/a.png" || s.Rows[1].Avatar != "" {
		t.Errorf("avatars: %q %q", s.Rows[0].Avatar, s.Rows[1].Avatar)
	}
	if !s.PrizeHead || !strings.HasPrefix(s.Countdown, "Ends in 00:0") {
		t.Errorf("prize column %v, countdown %q", s.PrizeHead, s.Countdown)
	}
	waitFor(t, "the plain board's rows", 10*time.Second, func() string {
		if p := look(t, ctx, "plain"); len(p.Rows) != 3 || p.State != "live" {
			return fmt.Sprintf("%+v", p)
		}
		return ""
	})
	p := look(t, ctx, "plain")
	if p.PrizeHead || p.Countdown != "" || p.Rows[0].Prize != nil {
		t.Errorf("a plain board shows tournament parts: %+v", p)
	}

	var held struct{ Rows []struct{ QID string } }
	g.call("GET", "/v1/boards/cup/quarantine", "", &held)
	g.call("POST", "/v1/boards/cup/quarantine/"+held.Rows[0].QID+"/reject", "", nil)
	waitFor(t, "the review marker gone", 10*time.Second, func() string {
		if r := look(t, ctx, "cup").Rows[1]; r.Review != "" {
			return fmt.Sprintf("%+v", r)
		}
		return ""
	})
	waitFor(t, "the final state", 20*time.Second, func() string {
		s := look(t, ctx, "cup")
		if s.State != "final" || s.Countdown != "Final standings" || len(s.Rows) != 4 {
			return fmt.Sprintf("state %q countdown %q rows %d", s.State, s.Countdown, len(s.Rows))
		}
		return ""
	})
}

// TestConsole: the operator console signs in with an admin token, shows the
// tenant's limits and boards, opens a board with its live top rows, approves
// a held submission (which then ranks, live), and finds a member with its
// history; a read token is refused at sign-in.
func TestConsole(t *testing.T) {
	g := startGateway(t)
	g.call("PUT", "/v1/boards/cup", `{"prizes":[{"from":1,"to":1,"prize":"€5"}],"rules":{"max_score":100}}`, nil)
	g.call("POST", "/v1/boards/cup/scores", `{"scores":[{"member":"p1","score":10},{"member":"p2","score":20},{"member":"p1","score":30},{"member":"cheat","score":5000}]}`, nil)
	ctx := browser(t, 1200, 1000)
	do(t, ctx, chromedp.Navigate(g.url("/console")))
	signIn := func(tok string) {
		t.Helper()
		js[bool](t, ctx, fmt.Sprintf(`(() => { document.getElementById("token").value = %q; document.getElementById("signin-form").requestSubmit(); return true })()`, tok))
	}
	signIn(g.token("viewer", auth.RoleRead, time.Now().Add(time.Hour)))
	waitFor(t, "a read token refused", 10*time.Second, func() string {
		if a := js[string](t, ctx, `document.getElementById("alert").textContent`); !strings.Contains(a, "forbidden") {
			return fmt.Sprintf("alert %q", a)
		}
		return ""
	})
	signIn(g.token("ops", auth.RoleAdmin, time.Now().Add(time.Hour)))
	waitFor(t, "the tenant and its boards", 10*time.Second, func() string {
		s := js[string](t, ctx, `document.getElementById("tenant-rows").textContent + "|" + document.getElementById("board-rows").textContent`)
		if !strings.Contains(s, "Boards (limit)") || !strings.Contains(s, "cup") {
			return s
		}
		return ""
	})
	js[bool](t, ctx, `(() => { document.querySelector('button[aria-label="Open board cup"]').click(); return true })()`)
	waitFor(t, "the board's live rows and its quarantine", 10*time.Second, func() string {
		s := js[string](t, ctx, `(() => { const el = document.getElementById("live"); const held = document.getElementById("held-rows").textContent;
			return (el ? el.getAttribute("state") + " " + el.rows.map((r) => r.member).join(",") : "none") + " | " + held })()`)
		if !strings.HasPrefix(s, "live p1,p2") || !strings.Contains(s, "cheat") || !strings.Contains(s, "max_score") {
			return s
		}
		return ""
	})
	js[bool](t, ctx, `(() => { document.querySelector('button[aria-label^="Approve cheat"]').click(); document.querySelector('#held-rows button.danger').click(); return true })()`)
	waitFor(t, "the approved submission ranked, live", 10*time.Second, func() string {
		s := js[string](t, ctx, `document.getElementById("live").rows.map((r) => r.member).join(",") + " | " + !document.getElementById("held-empty").hidden`)
		if s != "cheat,p1,p2 | true" {
			return s
		}
		return ""
	})
	js[bool](t, ctx, `(() => { document.getElementById("member").value = "p1"; document.getElementById("member-form").requestSubmit(); return true })()`)
	waitFor(t, "a member's row and history", 10*time.Second, func() string {
		s := js[string](t, ctx, `(document.getElementById("member-row") || {}).textContent + " | " + (document.getElementById("member-history") || {children: []}).children.length`)
		if !strings.HasPrefix(s, "p1: rank 2 of 3, score 30") || !strings.HasSuffix(s, "| 2") {
			return s
		}
		return ""
	})
}

// TestClientRefusalReachesEverySubscription: a RankwireClient whose token
// the gateway refuses (close 4003) calls each of its subscriptions' error
// handlers once, with the code, the close code and the gateway's reason,
// and ends in the error state without reconnecting.
func TestClientRefusalReachesEverySubscription(t *testing.T) {
	g := startGateway(t)
	board(g, "slots", 3)
	ctx := page(t, g)
	js[bool](t, ctx, `(async () => {
		const { RankwireClient } = await import("/widget/client.js");
		window.refusals = { a: [], b: [] };
		window.refused = new RankwireClient({ token: "not.a.token" });
		for (const id of ["a", "b"]) {
			refused.subscribe({ board: "slots", view: { kind: "top", limit: 3 } }, { error: (e) => refusals[id].push(e) });
		}
		return true;
	})()`)
	type refusal struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Fatal   bool   `json:"fatal"`
		Close   int    `json:"close"`
	}
	var got map[string][]refusal
	waitFor(t, "both error handlers called", 10*time.Second, func() string {
		got = js[map[string][]refusal](t, ctx, `refusals`)
		if len(got["a"]) == 0 || len(got["b"]) == 0 {
			return fmt.Sprintf("%+v", got)
		}
		return ""
	})
	if g.closes(4003) != 1 {
		t.Errorf("%v closes with 4003, want 1", g.closes(4003))
	}
	for _, id := range []string{"a", "b"} {
		if r := got[id]; len(r) != 1 || r[0].Code != "forbidden" || r[0].Close != 4003 || !r[0].Fatal || r[0].Message == "" {
			t.Errorf("subscription %s's error handler got %+v, want one forbidden refusal with close 4003 and a reason", id, r)
		}
	}
	if s := js[string](t, ctx, `refused.state`); s != "error" {
		t.Errorf("client state %q, want error", s)
	}
}
