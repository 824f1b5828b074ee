package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
)

// refusingProxy is a real reverse proxy in front of a gateway that refuses
// every WebSocket upgrade, as some corporate proxies and old load balancers
// do, and passes everything else on, event streams unbuffered. cut drops
// the streams open through it, as a network that loses a connection.
type refusingProxy struct {
	*httptest.Server
	allow   atomic.Bool // let upgrades through: the network works again
	mu      sync.Mutex
	refused int                      // upgrades refused
	passed  int                      // upgrades let through
	streams []url.Values             // every GET /v1/stream's query, in order
	open    map[*http.Request]func() // the streams open now: their cancel
}

func newRefusingProxy(t *testing.T, g *gateway) *refusingProxy {
	t.Helper()
	target, err := url.Parse(g.URL())
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target) // the Host stays the proxy's: the page's origin
	rp.FlushInterval = -1
	rp.ErrorLog = nil
	p := &refusingProxy{open: map[*http.Request]func(){}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			allow := p.allow.Load()
			p.mu.Lock()
			if allow {
				p.passed++
			} else {
				p.refused++
			}
			p.mu.Unlock()
			if allow {
				rp.ServeHTTP(w, r) // ReverseProxy carries a 101 over
				return
			}
			http.Error(w, "WebSocket upgrades are not allowed here", http.StatusForbidden)
			return
		}
		if r.URL.Path != "/v1/stream" {
			rp.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		p.mu.Lock()
		p.streams = append(p.streams, r.URL.Query())
		p.open[r] = cancel
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.open, r)
			p.mu.Unlock()
		}()
		rp.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(p.Close)
	return p
}

// cut ends every stream open through the proxy mid-body, and says how many.
func (p *refusingProxy) cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cancel := range p.open {
		cancel()
	}
	return len(p.open)
}

// seen returns the upgrades refused and the stream requests so far.
func (p *refusingProxy) seen() (int, []url.Values) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused, append([]url.Values(nil), p.streams...)
}

// TestBoardFallsBackToSSE: behind a proxy that refuses WebSocket upgrades,
// the element (through RankwireClient) moves to Server-Sent Events after
// two refused upgrades and shows the board live; when the proxy cuts the
// stream and when the gateway restarts it resumes from the seq it holds
// (since in the stream's query) and follows new submissions.
func TestBoardFallsBackToSSE(t *testing.T) {
	g := startGateway(t)
	board(g, "slots", 12)
	px := newRefusingProxy(t, g)
	ctx := openPageAt(t, browser(t, 1024, 800), px.URL+"/demo/e2e.html")
	mount(t, ctx, "top", map[string]string{"board": "slots", "token": readToken(g, "p1"), "limit": "5", "locale": "en-US"})
	live := func(what string, timeout time.Duration) {
		t.Helper()
		waitFor(t, what, timeout, func() string {
			s := look(t, ctx, "top")
			if s.State != "live" {
				return fmt.Sprintf("state %s %q", s.State, s.Status)
			}
			return sameRows(s.Rows, g.rows("/v1/boards/slots/top?limit=5"))
		})
	}
	live("live over SSE", 15*time.Second)
	refused, streams := px.seen()
	if refused < 2 || len(streams) == 0 {
		t.Fatalf("%d upgrades refused, %d streams: want at least 2 refused before a stream", refused, len(streams))
	}
	if q := streams[0]; q.Get("board") != "slots" || q.Get("kind") != "top" || q.Get("limit") != "5" || q.Has("since") {
		t.Errorf("first stream's query %v: want board slots, top, limit 5, no since", q)
	}
	g.call("POST", "/v1/boards/slots/scores", `{"member":"fresh","score":99999}`, nil)
	live("a submission shown over SSE", 10*time.Second)

	resumed := func(after int, what string) {
		t.Helper()
		waitFor(t, what, 20*time.Second, func() string {
			_, s := px.seen()
			if len(s) <= after {
				return fmt.Sprintf("%d streams", len(s))
			}
			if !s[len(s)-1].Has("since") {
				return fmt.Sprintf("stream %v resumes without since", s[len(s)-1])
			}
			return ""
		})
	}
	_, streams = px.seen()
	if n := px.cut(); n != 1 {
		t.Fatalf("cut %d streams, want the element's one", n)
	}
	resumed(len(streams), "a stream resumed after the cut")
	g.call("POST", "/v1/boards/slots/scores", `{"member":"after-cut","score":199999}`, nil)
	live("a submission shown after the cut", 15*time.Second)

	_, streams = px.seen()
	g.Stop()
	waitFor(t, "reconnecting while the gateway is down", 10*time.Second, func() string {
		if s := look(t, ctx, "top"); s.State != "reconnecting" {
			return "state " + s.State
		}
		return ""
	})
	g.Start()
	g.call("POST", "/v1/boards/slots/scores", `{"member":"after-restart","score":299999}`, nil)
	resumed(len(streams), "a stream resumed after the restart")
	live("a submission shown after the restart", 20*time.Second)
	if n := js[int](t, ctx, `events.filter(e => e.id === "top" && e.type === "rankwire-error").length`); n != 0 {
		t.Errorf("%d rankwire-error events, want none: a fallback is no error", n)
	}
}

// TestBoardRefusedOverSSE: behind the proxy that refuses upgrades, the
// stream's refusals reach the element as a WebSocket's do: a garbage or
// read-less token is "Access refused" (code forbidden), a board that does
// not exist ends that view with not_found; neither reconnects.
func TestBoardRefusedOverSSE(t *testing.T) {
	g := startGateway(t)
	board(g, "slots", 3)
	px := newRefusingProxy(t, g)
	ctx := openPageAt(t, browser(t, 1024, 800), px.URL+"/demo/e2e.html")
	mount(t, ctx, "garbage", map[string]string{"board": "slots", "token": "not.a.token"})
	mount(t, ctx, "no-read", map[string]string{"board": "slots", "token": g.token("p1", auth.RoleSubmit, time.Now().Add(time.Hour))})
	mount(t, ctx, "missing", map[string]string{"board": "nope", "token": readToken(g, "p1")})
	for _, id := range []string{"garbage", "no-read"} {
		waitFor(t, id+" shows access refused", 15*time.Second, func() string {
			if s := look(t, ctx, id); s.State != "error" || !strings.HasPrefix(s.Status, "Access refused: ") {
				return fmt.Sprintf("%+v", s)
			}
			return ""
		})
	}
	waitFor(t, "missing board refused", 15*time.Second, func() string {
		n := js[int](t, ctx, `events.filter(e => e.id === "missing" && e.type === "rankwire-error" && e.code === "not_found").length`)
		if s := look(t, ctx, "missing"); s.State != "error" || n != 1 {
			return fmt.Sprintf("%+v; %d rankwire-error not_found events", s, n)
		}
		return ""
	})
	_, streams := px.seen()
	if len(streams) < 3 {
		t.Errorf("%d stream requests: want the three elements' refusals to come over SSE", len(streams))
	}
	// The only reconnects are after the refused upgrades (1006), none after a refusal.
	if got := js[int](t, ctx, `events.filter(e => e.type === "rankwire-state" && e.state === "reconnecting" && e.code !== 1006).length`); got != 0 {
		t.Errorf("%d reconnects after a refusal, want none", got)
	}
}

// TestClientBackToWebSocket: RankwireClient on a page behind the proxy
// streams over SSE while upgrades are refused, tries a WebSocket again
// every retryWebSocket ms, and once the proxy lets upgrades through moves
// back to one, its view resumed there and following new submissions.
func TestClientBackToWebSocket(t *testing.T) {
	g := startGateway(t)
	board(g, "slots", 8)
	px := newRefusingProxy(t, g)
	ctx := openPageAt(t, browser(t, 1024, 800), px.URL+"/demo/e2e.html")
	js[bool](t, ctx, fmt.Sprintf(`(async () => {
		const { RankwireClient, sortedRows } = await import("/widget/client.js");
		window.rc = new RankwireClient({ token: %q, retryWebSocket: 300 });
		window.rcSeen = { transports: [], rows: [] };
		rc.addEventListener("transport", (e) => rcSeen.transports.push(e.detail.transport));
		rc.subscribe({ board: "slots", view: { kind: "top", limit: 5 } }, { update: (v) => { rcSeen.rows = sortedRows(v).map((r) => r.member); } });
		return true;
	})()`, readToken(g, "p1")))
	type state struct {
		Transport  string
		Transports []string
		Rows       []string
	}
	look := func() state {
		return js[state](t, ctx, `({ transport: rc.transport, transports: rcSeen.transports, rows: rcSeen.rows })`)
	}
	top := func() []string {
		var out []string
		for _, r := range g.rows("/v1/boards/slots/top?limit=5") {
			out = append(out, r.Member)
		}
		return out
	}
	following := func(what, transport string) {
		t.Helper()
		waitFor(t, what, 15*time.Second, func() string {
			s := look()
			if want := top(); s.Transport != transport || strings.Join(s.Rows, ",") != strings.Join(want, ",") {
				return fmt.Sprintf("%+v, want %s rows %v", s, transport, want)
			}
			return ""
		})
	}
	following("live over SSE", "sse")
	g.call("POST", "/v1/boards/slots/scores", `{"member":"on-sse","score":99999}`, nil)
	following("a submission over SSE", "sse")

	px.allow.Store(true)
	following("back on a WebSocket", "websocket")
	g.call("POST", "/v1/boards/slots/scores", `{"member":"on-ws","score":199999}`, nil)
	following("a submission over the WebSocket", "websocket")
	if s := look(); strings.Join(s.Transports, ",") != "sse,websocket" {
		t.Errorf("transport events %v, want [sse websocket]", s.Transports)
	}
	px.mu.Lock()
	passed := px.passed
	px.mu.Unlock()
	if passed == 0 {
		t.Error("no upgrade went through the proxy")
	}
	waitFor(t, "the stream ended after the move", 10*time.Second, func() string {
		px.mu.Lock()
		defer px.mu.Unlock()
		if n := len(px.open); n != 0 {
			return fmt.Sprintf("%d streams open through the proxy", n)
		}
		return ""
	})
}
