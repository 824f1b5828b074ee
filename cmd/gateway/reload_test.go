package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/await"
)

// secretOf is an HS256 secret of 32 bytes c, base64, as a key file holds it.
func secretOf(c string) string {
	return base64.StdEncoding.EncodeToString([]byte(strings.Repeat(c, 32)))
}

// rewrite replaces the key file at path with body the way an operator's
// tooling should: a new file renamed over the old, so that a reload never
// reads half a file.
func rewrite(t *testing.T, path, body string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// token mints an admin token of tenant with the HS256 secret secretOf(c)
// under kid.
func token(t *testing.T, kid, tenant, c string) string {
	t.Helper()
	sk := auth.SigningKey{ID: kid, Alg: auth.HS256, Key: []byte(strings.Repeat(c, 32))}
	tok, err := auth.Mint(sk, auth.Claims{Tenant: tenant, Roles: auth.RoleAdmin, Expiry: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// status answers GET /v1/boards with tok.
func status(p *proc, tok string) int {
	code, _ := call("GET", p.url("/v1/boards"), tok, "", nil)
	return code
}

// hup sends SIGHUP to p.
func (p *proc) hup(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

// logWait bounds awaitLogged. Generous: the gateway under test shares a
// loaded 2-core machine with the race detector and other tests' gateways
// (a demo mode one also runs its simulation), and a bound that is met
// costs nothing.
const logWait = 60 * time.Second

// awaitLogged waits until p has logged n lines matching re, for up to
// logWait.
func (p *proc) awaitLogged(t *testing.T, re *regexp.Regexp, n int) []string {
	t.Helper()
	await.For(t, logWait, func() error {
		if got := len(p.logged(re)); got < n {
			return fmt.Errorf("%d log lines match %s, want %d", got, re, n)
		}
		return nil
	})
	return p.logged(re)
}

// TestSIGHUPRotatesKeys rotates tenant t1 from kid k1 to kid k1b, adds
// tenant t2 and caps t1 at one connection, in one SIGHUP: t2's token works
// after it and not before; k1's token is refused and its live WebSocket
// closes 4003; k1b's works; the new connection cap applies.
func TestSIGHUPRotatesKeys(t *testing.T) {
	keys, sk := keyFile(t)
	p := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir(), "RANKWIRE_PUSH_INTERVAL=20ms")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	old, rotated, t2 := adminToken(t, sk), token(t, "k1b", "t1", "r"), token(t, "k2", "t2", "s")
	if got := status(p, t2); got != 401 {
		t.Fatalf("t2's token before the reload: %d, want 401", got)
	}
	live := subscribedClient(ctx, t, p, old)

	rewrite(t, keys, fmt.Sprintf(`{"tenants":{
		"t1":{"keys":[{"kid":"k1b","alg":"HS256","secret":%q}],"limits":{"connections":1}},
		"t2":{"keys":[{"kid":"k2","alg":"HS256","secret":%q}],"limits":{"connections":1000000}}}}`, secretOf("r"), secretOf("s")))
	p.hup(t)
	line := p.awaitLogged(t, regexp.MustCompile(`msg="keys reloaded"`), 1)[0]
	// t2's cap is past any connection budget: the reload warns, naming it.
	p.awaitLogged(t, regexp.MustCompile(`level=WARN msg="a tenant's connections limit reaches the connection budget.*tenant=t2 connections=1000000`), 1)
	for _, want := range []string{`added_tenants=[t2]`, `removed_keys=[k1]`, `added_keys="[k1b k2]"`} {
		if !strings.Contains(line, want) {
			t.Errorf("reload log %q lacks %s", line, want)
		}
	}
	if got := status(p, t2); got != 200 {
		t.Errorf("t2's token after the reload: %d, want 200", got)
	}
	if code, err := call("PUT", p.url("/v1/boards/new"), t2, "{}", nil); code != 200 {
		t.Errorf("t2 creating a board after the reload: %d %v", code, err)
	}
	if code, err := call("POST", p.url("/v1/boards/new/scores"), t2, `{"member":"m","score":1}`, nil); code != 200 {
		t.Errorf("t2 submitting after the reload: %d %v", code, err)
	}
	if got := status(p, old); got != 401 {
		t.Errorf("removed kid k1's token after the reload: %d, want 401", got)
	}
	if got := status(p, rotated); got != 200 {
		t.Errorf("new kid k1b's token after the reload: %d, want 200", got)
	}
	if code, err := closeCode(ctx, live); code != 4003 {
		t.Errorf("k1's live WebSocket closed %d (%v), want 4003", code, err)
	}
	// The closed k1 connection gives its slot back once its close handshake
	// is over, a moment after the client saw the close: until then a new one
	// is refused at the cap of 1 too. Wait for one that is let in.
	first := dialAdmitted(ctx, t, "ws://"+p.addr+"/v1/ws?access_token="+rotated)
	defer first.CloseNow()
	second, _, err := websocket.Dial(ctx, "ws://"+p.addr+"/v1/ws?access_token="+rotated, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer second.CloseNow()
	if code, err := closeCode(ctx, second); code != 4029 {
		t.Errorf("t1's second WebSocket under the reloaded cap of 1 closed %d (%v), want 4029", code, err)
	}
}

// dialAdmitted dials url until a connection is let in: one that answers a
// subscribe (here with an error: the board does not exist) instead of
// closing at once as a refused one does. (A read with a deadline would not
// do: coder/websocket closes the connection when a read's context ends.)
func dialAdmitted(ctx context.Context, t *testing.T, url string) *websocket.Conn {
	t.Helper()
	var c *websocket.Conn
	await.For(t, 10*time.Second, func() error {
		var err error
		if c, _, err = websocket.Dial(ctx, url, nil); err != nil {
			return err
		}
		sub := map[string]any{"type": "subscribe", "id": "probe", "board": "no-such-board", "view": map[string]any{"kind": "top", "limit": 1}}
		if err := wsjson.Write(ctx, c, sub); err != nil {
			return fmt.Errorf("refused: %v", err)
		}
		var reply map[string]any
		if err := wsjson.Read(ctx, c, &reply); err != nil {
			return fmt.Errorf("refused: %v", err)
		}
		return nil
	})
	return c
}

// closeCode reads c until it ends and returns the close code (-1 without
// one) and the error the read ended with.
func closeCode(ctx context.Context, c *websocket.Conn) (websocket.StatusCode, error) {
	var err error
	for err == nil {
		_, _, err = c.Read(ctx)
	}
	return websocket.CloseStatus(err), err
}

// TestSIGHUPBadFileKeepsKeys: a key file that does not parse, one with a
// bad key and one gone each leave the keys in use, whole (the bad file's
// valid new tenant is not applied either), and log an ERROR naming the
// problem; the gateway keeps serving.
func TestSIGHUPBadFileKeepsKeys(t *testing.T) {
	keys, sk := keyFile(t)
	p := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir())
	tok, t2 := adminToken(t, sk), token(t, "k2", "t2", "s")
	bad := []struct{ body, names string }{
		{`{"tenants":{`, `unexpected EOF`},
		{fmt.Sprintf(`{"tenants":{"t2":{"keys":[{"kid":"k2","alg":"HS256","secret":%q}]},
			"t3":{"keys":[{"kid":"k3","alg":"HS256","secret":"c2hvcnQ="}]}}}`, secretOf("s")),
			`tenant \"t3\" key \"k3\": secret: decodes to 5 bytes`},
		{"", `no such file`},
	}
	refused := regexp.MustCompile(`level=ERROR msg="keys not reloaded: keeping the keys in use"`)
	for i, b := range bad {
		if b.body == "" {
			if err := os.Remove(keys); err != nil {
				t.Fatal(err)
			}
		} else {
			rewrite(t, keys, b.body)
		}
		p.hup(t)
		line := p.awaitLogged(t, refused, i+1)[i]
		if !strings.Contains(line, b.names) {
			t.Errorf("file %d: error %q does not say %q", i, line, b.names)
		}
		if got := status(p, tok); got != 200 {
			t.Errorf("file %d: k1's token after a refused reload: %d, want 200", i, got)
		}
		if got := status(p, t2); got != 401 {
			t.Errorf("file %d: t2's token after a refused reload: %d, want 401", i, got)
		}
	}
	if strings.Contains(strings.Join(p.logged(regexp.MustCompile(`.`)), "\n"), secretOf("s")) {
		t.Error("a secret reached the log")
	}
	rewrite(t, filepath.Clean(keys), fmt.Sprintf(`{"tenants":{"t2":{"keys":[{"kid":"k2","alg":"HS256","secret":%q}]}}}`, secretOf("s")))
	p.hup(t)
	p.awaitLogged(t, regexp.MustCompile(`msg="keys reloaded"`), 1)
	if got := status(p, t2); got != 200 {
		t.Errorf("t2's token after a good file: %d, want 200", got)
	}
}

// TestSIGHUPDemoMode: without --keys there is nothing to reload; the
// gateway says so and keeps serving. The demo's start is quick at the
// default --sync always: it seeds the players' profiles after it serves.
func TestSIGHUPDemoMode(t *testing.T) {
	p := startGateway(t, "RANKWIRE_DATA="+t.TempDir())
	p.hup(t)
	p.awaitLogged(t, regexp.MustCompile(`nothing to reload`), 1)
	await.For(t, logWait, func() error { // one slow answer on a loaded machine is no failure
		if code, err := call("GET", p.url("/healthz"), "", "", nil); code != 200 {
			return fmt.Errorf("healthz after SIGHUP in demo mode: %d %v", code, err)
		}
		return nil
	})
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		t.Fatalf("the gateway exited after SIGHUP in demo mode: %v", err)
	default:
	}
}

// TestSIGHUPDuringShutdown: SIGHUPs arriving while the gateway shuts down
// neither end it early nor stop it from exiting 0.
func TestSIGHUPDuringShutdown(t *testing.T) {
	keys, _ := keyFile(t)
	p := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir())
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			break // already gone: the exit status below tells how
		}
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("exit after SIGTERM and SIGHUPs: %v", err)
		}
		p.done <- err // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatal("no exit 30 s after SIGTERM")
	}
}
