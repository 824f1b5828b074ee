package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/gwtest"
	"github.com/rankwire/rankwire/web"
)

// chromium returns the browser's path: $RANKWIRE_CHROMIUM where set (and
// nothing else: RANKWIRE_CHROMIUM=none runs the tests as on a machine
// without one), else chromium or chromium-browser on PATH or in /usr/bin.
// Without one the test fails where CI=true (CI installs it: .ci/run) and
// is skipped elsewhere, counted in the line TestMain prints.
func chromium(t *testing.T) string {
	t.Helper()
	if p, ok := findChromium(); ok {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("Chromium not found (/usr/bin/chromium): CI must install the Debian package chromium")
	}
	skipMissing(t, "browser", "chromium not found (apt-get install chromium, or set RANKWIRE_CHROMIUM)")
	return ""
}

func findChromium() (string, bool) {
	if p, ok := os.LookupEnv("RANKWIRE_CHROMIUM"); ok {
		_, err := os.Stat(p)
		return p, err == nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// browser starts a headless Chromium with a fresh profile and returns a tab's
// context, ended when the test ends. The flags keep it off the network: the
// machines running the tests have none.
func browser(t *testing.T, width, height int) context.Context {
	t.Helper()
	return browserAs(t, width, height)
}

// phone is browser as a phone: a mobile viewport width px wide at twice
// the pixels (a page's viewport meta applies, scrollbars overlay the page
// and take no width, screenshots are sharp).
func phone(t *testing.T, width, height int) context.Context {
	t.Helper()
	return browserAs(t, width, height, chromedp.EmulateMobile, chromedp.EmulateScale(2))
}

func browserAs(t *testing.T, width, height int, emulate ...chromedp.EmulateViewportOption) context.Context {
	t.Helper()
	exe := chromium(t)
	profile, err := os.MkdirTemp("", "rankwire-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile), chromedp.WindowSize(width, height),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelB()
		cancelA()
		removeProfile(profile)
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height), emulate...)); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// removeProfile removes a Chromium profile; its child processes may still
// write there for a moment after the browser stopped.
func removeProfile(dir string) {
	for range 50 {
		if os.RemoveAll(dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// do runs chromedp steps bounded by 30 s.
func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatal(err)
	}
}

// js evaluates a JavaScript expression, awaiting a promise, into a T.
func js[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitFor polls check every 50 ms until it returns "" (done) or the deadline
// passes, then fails with check's last complaint. check may evaluate in the
// browser and call the gateway: it sees the latest of both each time.
func waitFor(t *testing.T, what string, timeout time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		why := check()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %s", what, timeout, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gateway is the real gateway in-process (internal/gwtest) serving the
// widget plus a test page at /demo/e2e.html; Stop and Start again is a
// restart.
type gateway struct {
	*gwtest.Gateway
	t    *testing.T
	keys *auth.Keyring
}

// casino-a writes boards above the default 10/s: the console tests page through many boards.
const testKeys = `{"tenants":{"casino-a":{"keys":[{"kid":"a1","alg":"HS256","secret":%q}],"limits":{"connections":%d,"board_writes_per_second":1e6,"identity_writes_per_second":1e6}}}}`

// gatewayOpts are a test gateway's settings where a test needs other than
// the defaults.
type gatewayOpts struct {
	connections int      // casino-a's WebSocket connection cap; 0: the default
	origins     []string // allowed origins besides the gateway's own
}

func startGateway(t *testing.T) *gateway { return startGatewayWith(t, gatewayOpts{}) }

func startGatewayWith(t *testing.T, o gatewayOpts) *gateway {
	t.Helper()
	keys, err := auth.ParseKeys(fmt.Appendf(nil, testKeys, base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{'k'}, 32)), o.connections))
	if err != nil {
		t.Fatal(err)
	}
	gw := gwtest.Start(t, gwtest.Options{Keys: keys, Static: testPages(), Origins: o.origins})
	return &gateway{Gateway: gw, t: t, keys: keys}
}

// testPages serves the test page and the JavaScript unit tests under /demo/,
// next to the real widget.
func testPages() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", web.Handler(web.Options{}))
	mux.Handle("GET /demo/e2e.html", http.StripPrefix("/demo/", http.FileServerFS(os.DirFS("testdata"))))
	mux.Handle("GET /demo/testdata/", http.StripPrefix("/demo/testdata/", http.FileServerFS(os.DirFS("testdata"))))
	mux.Handle("GET /demo/static/", http.StripPrefix("/demo/static/", http.FileServerFS(web.Static())))
	return mux
}

// closes returns how many WebSockets the gateway closed with code, from
// its rankwire_ws_closes_total.
func (g *gateway) closes(code int) float64 {
	g.t.Helper()
	mfs, err := g.Reg.Gather()
	if err != nil {
		g.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "rankwire_ws_closes_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "code" && l.GetValue() == strconv.Itoa(code) {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func (g *gateway) url(path string) string { return g.URL() + path }

// token mints a casino-a token for sub with roles, expiring at exp.
func (g *gateway) token(sub string, roles auth.Role, exp time.Time) string {
	g.t.Helper()
	key, _ := g.keys.SigningKey("a1")
	tok, err := auth.Mint(key, auth.Claims{Tenant: "casino-a", Subject: sub, Roles: roles, Expiry: exp})
	if err != nil {
		g.t.Fatal(err)
	}
	return tok
}

// call sends a request with the admin token and decodes a 200 answer into out.
func (g *gateway) call(method, path, body string, out any) {
	g.t.Helper()
	code, raw := g.status(method, path, body)
	if code != 200 {
		g.t.Fatalf("%s %s: %d %s", method, path, code, raw)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(raw), out); err != nil {
			g.t.Fatal(err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
