package live

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/logtest"
	"github.com/rankwire/rankwire/internal/refusal"
	"github.com/rankwire/rankwire/wire"
)

// TestWSRefusedUpgrades: a refused origin, a refused access_token and a
// tenant at its cap are upgrades closed at once (what a browser can see),
// each with its code and a reason, before any data frame, even when the
// client sends a subscribe at once; none of them subscribes, and each is
// logged without the token.
func TestWSRefusedUpgrades(t *testing.T) {
	logs := &logtest.Buffer{}
	e := newEnvLog(t, Options{AllowedOrigins: []string{"games.example"}}, slog.New(slog.NewJSONHandler(logs, nil)))
	e.putBoard("b", "weekly", hub.Settings{})
	good := e.token("b", auth.RoleRead)
	e.dial("access_token="+good, true, nil)
	e.dial("access_token="+good, true, nil) // casino-b's cap is 2
	bad := good[:len(good)-4] + "AAAA"
	cases := []struct {
		name, query, origin string
		code                wire.CloseCode
		reason              string
	}{
		{"foreign origin", "access_token=" + good, "https://evil.example", wire.CloseForbidden, "origin refused: https://evil.example"},
		{"origin with another port", "access_token=" + good, "https://games.example:8443", wire.CloseForbidden, "origin refused"},
		{"null origin", "", "null", wire.CloseForbidden, "origin refused"},
		{"bad signature", "access_token=" + bad, "", wire.CloseForbidden, "token refused"},
		{"no read role", "access_token=" + e.token("b", auth.RoleSubmit), "", wire.CloseForbidden, "token refused"},
		{"over the cap", "access_token=" + good, "https://games.example", wire.CloseOverLimit, "tenant at its connection cap"},
	}
	sub := appendClientFrame(nil, opText, []byte(`{"type":"subscribe","id":"s","board":"weekly","view":{"kind":"top"}}`))
	for _, c := range cases {
		h := http.Header{}
		if c.origin != "" {
			h.Set("Origin", c.origin)
		}
		r, status := e.rawDial(c.query, h)
		if status != http.StatusSwitchingProtocols {
			t.Fatalf("%s: upgrade answered %d, want 101 then a close", c.name, status)
		}
		r.write(sub)
		code, reason := r.closeFrame()
		if code != c.code || !strings.HasPrefix(reason, c.reason) {
			t.Errorf("%s: closed %d %q, want %d %q", c.name, code, reason, c.code, c.reason)
		}
	}
	if f, o := e.closes(wire.CloseForbidden), e.closes(wire.CloseOverLimit); f != 5 || o != 1 {
		t.Errorf("closes counted: 4003 %v, 4029 %v; want 5 and 1", f, o)
	}
	if n := e.p.eng.Stats().Subscriptions; n[0]+n[1]+n[2]+n[3] != 0 {
		t.Fatalf("refused connections subscribed: %v", n)
	}
	checkFor(t, 5*time.Second, func() error {
		reasons := map[string]int{}
		for _, l := range logs.Lines() {
			if l["msg"] == "websocket refused" {
				reasons[fmt.Sprint(l["reason"])]++
			}
		}
		if reasons[refusal.Origin] != 3 || reasons[refusal.Token] != 2 || reasons[refusal.Cap] != 1 {
			return fmt.Errorf("refusals logged %v, want 3 origin, 2 token, 1 connection_cap", reasons)
		}
		return nil
	})
	for _, l := range logs.Lines() {
		if l["reason"] == refusal.Token && l["tenant"] != "casino-b" {
			t.Errorf("a token refusal without its key's tenant: %v", l)
		}
	}
	out := logs.String()
	if !strings.Contains(out, `"origin":"https://evil.example"`) || !strings.Contains(out, `"tenant":"casino-b"`) {
		t.Fatalf("refusal lines lack the origin or the tenant:\n%s", out)
	}
	if strings.Contains(out, bad) || strings.Contains(out, good) {
		t.Fatal("a token was logged")
	}
}

// TestWSAuthMessageOverCap: a bare connection whose auth message finds its
// tenant at the cap closes 4029.
func TestWSAuthMessageOverCap(t *testing.T) {
	e := newEnv(t, Options{})
	tok := e.token("b", auth.RoleRead)
	e.dial("access_token="+tok, true, nil)
	e.dial("access_token="+tok, true, nil)
	c := e.dial("", true, nil)
	c.Send(map[string]any{"type": "auth", "token": tok})
	if code := c.WaitClosed(5 * time.Second); code != wire.CloseOverLimit {
		t.Fatalf("auth over the cap closed with %d, want %d", code, wire.CloseOverLimit)
	}
}

// TestWarnOpenOrigins: a pattern that lets every site in is warned about at
// start; a pattern of one site is not.
func TestWarnOpenOrigins(t *testing.T) {
	for _, c := range []struct {
		patterns []string
		warned   int
	}{
		{[]string{"*"}, 1},
		{[]string{"*://*", "games.example"}, 1},
		{[]string{"games.example", "*.casino.io", "https://lobby.example:8443"}, 0},
	} {
		logs := &logtest.Buffer{}
		warnOpenOrigins(slog.New(slog.NewJSONHandler(logs, nil)), c.patterns)
		if n := len(logs.Lines()); n != c.warned {
			t.Errorf("%q: %d warnings, want %d", c.patterns, n, c.warned)
		}
	}
}
