package live

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
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/wstest"
	"github.com/rankwire/rankwire/subscriptions"
	"github.com/rankwire/rankwire/wire"
)

// TestWSTokenExpiryAndRefresh: a token that expires closes the connection
// with 4001; a refresh by a later auth message keeps it open.
func TestWSTokenExpiryAndRefresh(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("a", "weekly", hub.Settings{})
	// The refreshed connection's first token expires 300 ms before the
	// other's: once the other is closed, a failed refresh would have closed it.
	soon := time.Now().Add(1200 * time.Millisecond)
	refreshed := e.dial("access_token="+e.tokenFor("a", auth.RoleRead, "p1", soon), true, nil)
	expiring := e.dial("access_token="+e.tokenFor("a", auth.RoleRead, "p1", soon.Add(300*time.Millisecond)), true, nil)
	refreshed.Send(map[string]any{"type": "auth", "token": e.tokenFor("a", auth.RoleRead, "p1", time.Now().Add(time.Hour))})
	if code := expiring.WaitClosed(5 * time.Second); code != wire.CloseExpired {
		t.Fatalf("expired connection closed with %d, want %d", code, wire.CloseExpired)
	}
	refreshed.Subscribe("s1", "weekly", map[string]any{"kind": "top"})
	checkFor(t, 5*time.Second, func() error {
		if _, ok := refreshed.Rows("s1"); !ok {
			return fmt.Errorf("no snapshot on the refreshed connection")
		}
		return nil
	})
}

// TestWSAuthMessage: a bare connection authenticates with its first
// message; none in time closes 4001; a token that may not connect, 4003.
func TestWSAuthMessage(t *testing.T) {
	e := newEnv(t, Options{AuthTimeout: 300 * time.Millisecond})
	e.putBoard("a", "weekly", hub.Settings{})
	c := e.dial("", true, nil)
	c.Send(map[string]any{"type": "auth", "token": e.token("a", auth.RoleRead)})
	c.Subscribe("s1", "weekly", map[string]any{"kind": "top"})
	checkFor(t, 5*time.Second, func() error {
		if _, ok := c.Rows("s1"); !ok {
			return fmt.Errorf("no snapshot after auth message")
		}
		return nil
	})
	if code := e.dial("", true, nil).WaitClosed(5 * time.Second); code != wire.CloseExpired {
		t.Fatalf("silent connection closed with %d, want %d", code, wire.CloseExpired)
	}
	if code := e.dial("access_token="+e.token("a", auth.RoleSubmit), true, nil).WaitClosed(5 * time.Second); code != wire.CloseForbidden {
		t.Fatalf("submit-only token closed with %d, want %d", code, wire.CloseForbidden)
	}
	if code := e.dial("access_token=garbage", true, nil).WaitClosed(5 * time.Second); code != wire.CloseForbidden {
		t.Fatalf("bad token closed with %d, want %d", code, wire.CloseForbidden)
	}
}

// TestWSRefusals: another tenant's board, a board outside the token's
// patterns, malformed messages and over-limit views are answered with
// error messages, and the connection keeps serving.
func TestWSRefusals(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("a", "weekly", hub.Settings{})
	e.putBoard("b", "slots-1", hub.Settings{})
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
		c.Send(s.msg)
	}
	c.Send(`{"type":"subscribe","id":"ok","board":"slots-1","view":{"kind":"top"}}`)
	c.Send(`{"type":"subscribe","id":"ok","board":"slots-1","view":{"kind":"top"}}`)
	checkFor(t, 5*time.Second, func() error {
		if n := len(c.Errors()); n < len(sends)+1 {
			return fmt.Errorf("%d errors, want %d", n, len(sends)+1)
		}
		return nil
	})
	errs := c.Errors()
	for i, s := range sends {
		if errs[i].Code != s.code || errs[i].Message == "" {
			t.Errorf("%s: answered %+v, want code %s", s.msg, errs[i], s.code)
		}
	}
	if last := errs[len(sends)]; last.Code != "conflict" {
		t.Errorf("duplicate id answered %+v, want conflict", last)
	}
	if _, ok := c.Rows("ok"); !ok {
		t.Fatal("no snapshot for the valid subscription")
	}
}

// TestWSLimits: a tenant past its connection cap is accepted and closed
// at once with 4029; a connection holds at most wire.MaxSubscriptions; origins
// other than the host and the allowed ones are accepted and closed 4003
// before a byte of data.
func TestWSLimits(t *testing.T) {
	e := newEnv(t, Options{AllowedOrigins: []string{"games.example"}})
	e.putBoard("b", "slots-1", hub.Settings{})
	tok := "access_token=" + e.token("b", auth.RoleRead)
	c := e.dial(tok, true, nil)
	e.dial(tok, true, nil)
	third := e.dial(tok, true, nil)
	if code := third.WaitClosed(5 * time.Second); code != wire.CloseOverLimit {
		t.Fatalf("third connection of casino-b closed with %d, want %d", code, wire.CloseOverLimit)
	}
	for i := range wire.MaxSubscriptions + 1 {
		c.Subscribe(fmt.Sprint("s", i), "slots-1", map[string]any{"kind": "rank", "rank": i + 1})
	}
	checkFor(t, 5*time.Second, func() error {
		if errs := c.Errors(); len(errs) != 1 || !strings.Contains(errs[0].Message, "at most 100") {
			return fmt.Errorf("errors %+v, want one over the limit", errs)
		}
		return nil
	})
	atok := "access_token=" + e.token("a", auth.RoleRead)
	evil := &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}}
	if code := e.dial(atok, true, evil).WaitClosed(5 * time.Second); code != wire.CloseForbidden {
		t.Fatalf("a foreign origin closed with %d, want %d", code, wire.CloseForbidden)
	}
	good := &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://games.example"}}}
	c2, err := e.tryDial(atok, good)
	if err != nil {
		t.Fatalf("an allowed origin: %v", err)
	}
	c2.CloseNow()
}

// TestWSSlowClient: a client that never reads holds at most
// subscriptions.MaxChain pending messages per subscription on the server while another client stays on
// time, and is closed once bytes waited unsent past the slow timeout. The
// stalled client watches 50 distinct top-100 views so that its socket
// fills fast.
func TestWSSlowClient(t *testing.T) {
	e := newEnv(t, Options{SlowTimeout: 500 * time.Millisecond})
	e.putBoard("a", "weekly", hub.Settings{Policy: "latest"})
	tok := "access_token=" + e.token("a", auth.RoleRead)
	view := map[string]any{"kind": "top", "limit": 100}
	const views = 50
	slow := e.dial(tok, false, wstest.SmallReadBuffer())
	for i := range views {
		slow.Subscribe(fmt.Sprint("s", i), "weekly", map[string]any{"kind": "top", "limit": 100, "offset": i})
	}
	fast := e.dial(tok, true, nil)
	fast.Subscribe("s", "weekly", view)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; testutil.ToFloat64(e.p.metrics.slowCloses) == 0; i++ {
		if i > 1000 {
			var d1, d2 dto.Metric
			e.p.metrics.messages.Write(&d1)
			e.p.metrics.bytes.Write(&d2)
			t.Fatalf("the stalled client was never closed: %v messages %v bytes", d1.GetCounter().GetValue(), d2.GetCounter().GetValue())
		}
		var items []hub.Item
		for range 100 {
			items = append(items, hub.Item{Member: fmt.Sprintf("player-with-a-long-name-%d", r.IntN(200)), Score: float64(r.IntN(1e6))})
		}
		e.submit("a", "weekly", items...)
		for _, c := range e.p.connections() {
			if n := c.outbox().Len(); n > views*subscriptions.MaxChain+1 {
				t.Fatalf("a connection holds %d pending messages, want at most %d per subscription and a heartbeat", n, subscriptions.MaxChain)
			}
		}
		if i%10 == 0 {
			checkFor(t, 5*time.Second, func() error { return sameAsTop(e, fast, "weekly", "s", 100) })
		}
	}
}

// TestClose: shutdown closes every WebSocket with 1001 and
// refuses new ones.
func TestClose(t *testing.T) {
	e := newEnv(t, Options{})
	c := e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
	checkFor(t, 5*time.Second, func() error {
		if len(e.p.connections()) != 1 {
			return fmt.Errorf("connection not registered yet")
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if code := c.WaitClosed(5 * time.Second); code != wire.CloseGoingAway {
		t.Fatalf("closed with %d, want %d", code, wire.CloseGoingAway)
	}
}

// sameAsTop compares a subscription's state with the hub's read of the
// top limit rows of tenant a's board.
func sameAsTop(e *env, c *wsClient, board, id string, limit int) error {
	page, err := e.hub.Top(hub.Loc{Tenant: "casino-a", Board: board}, 0, nil, limit)
	if err != nil {
		return err
	}
	want := map[int]rowJSON{}
	for _, r := range page.Rows {
		want[r.Rank] = rowJSON{Rank: r.Rank, Member: r.Member, Score: r.Score, Subscore: r.Subscore,
			Name: r.Profile.Name, Avatar: r.Profile.Avatar, Country: r.Profile.Country, Review: r.Review}
	}
	got, ok := c.Rows(id)
	if !ok || !maps.Equal(got, want) {
		return fmt.Errorf("%s: client holds %v, the hub reads %v", id, got, want)
	}
	return nil
}
