package web_test

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/web"
)

// inlineCode matches what the console's Content-Security-Policy would
// block in console.html: a script element without src, a style element, a
// style attribute, an inline event handler, a javascript: URL.
var inlineCode = regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>\s*[^<\s]|<style|\sstyle\s*=|\son[a-z]+\s*=|javascript:`)

// TestConsoleHasNoInlineCode: console.html keeps its script and styles in
// files of their own (console.js, console.css), which the widget path
// serves, so that the console runs under a policy without 'unsafe-inline'
// scripts.
func TestConsoleHasNoInlineCode(t *testing.T) {
	page, err := fs.ReadFile(web.Static(), "console.html")
	if err != nil {
		t.Fatal(err)
	}
	if m := inlineCode.FindString(string(page)); m != "" {
		t.Errorf("console.html holds inline code: %q", m)
	}
	for _, f := range []string{"console.js", "console.css"} {
		if _, err := fs.Stat(web.Static(), f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestConsoleUnderCSP: the gateway serves /console with its
// Content-Security-Policy, X-Frame-Options and nosniff, and in Chromium the
// console signs in, lists its boards and opens one with the live widget
// (a WebSocket to the gateway, a styled shadow root) without a single
// policy violation.
func TestConsoleUnderCSP(t *testing.T) {
	g := startGateway(t)
	g.call("PUT", "/v1/boards/cup", `{}`, nil)
	g.call("POST", "/v1/boards/cup/scores", `{"scores":[{"member":"p1","score":10},{"member":"p2","score":20}]}`, nil)
	resp, err := http.Get(g.url("/console"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %s", csp, want)
		}
	}
	for _, d := range []string{"script-src", "style-src"} {
		if i := strings.Index(csp, d); i < 0 || strings.Contains(strings.SplitN(csp[i:], ";", 2)[0], "unsafe") {
			t.Errorf("%s missing or allowing unsafe sources: %q", d, csp)
		}
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("X-Frame-Options %q, X-Content-Type-Options %q", resp.Header.Get("X-Frame-Options"), resp.Header.Get("X-Content-Type-Options"))
	}
	ctx := browser(t, 1200, 1000)
	do(t, ctx, chromedp.Navigate(g.url("/console")))
	js[bool](t, ctx, `(() => { window.violations = []; document.addEventListener("securitypolicyviolation",
		(e) => window.violations.push(e.violatedDirective + " " + e.blockedURI)); return true })()`)
	consoleSignIn(t, ctx, g)
	waitFor(t, "the console's boards", 10*time.Second, func() string {
		if s := js[string](t, ctx, `document.getElementById("board-rows").textContent`); !strings.Contains(s, "cup") {
			return fmt.Sprintf("board rows %q", s)
		}
		return ""
	})
	js[bool](t, ctx, `(() => { document.querySelector('button[aria-label="Open board cup"]').click(); return true })()`)
	waitFor(t, "the live widget", 10*time.Second, func() string {
		s := js[string](t, ctx, `(() => { const el = document.getElementById("live"); return el ? el.getAttribute("state") + " " + el.rows.map((r) => r.member).join(",") : "none" })()`)
		if s != "live p2,p1" {
			return fmt.Sprintf("widget %q", s)
		}
		return ""
	})
	// The widget is styled (its shadow styles apply: the frame's rounded
	// border), with no <style> element the policy would have refused.
	if s := js[string](t, ctx, `(() => { const r = document.getElementById("live").shadowRoot;
		return getComputedStyle(r.querySelector(".frame")).borderTopLeftRadius + " " + r.querySelectorAll("style").length })()`); s != "12px 0" {
		t.Errorf("the widget's frame radius and style elements: %q, want 12px 0", s)
	}
	if v := js[[]string](t, ctx, `window.violations`); len(v) > 0 {
		t.Errorf("policy violations: %q", v)
	}
	if !js[bool](t, ctx, `window.consoleReady === true`) {
		t.Error("console.js did not run")
	}
}

// TestConsolePagesBoards: with more boards than one page of GET /v1/boards
// (1,000), the console lists the first page with "More boards", which adds
// the rest, in name order, and then hides.
func TestConsolePagesBoards(t *testing.T) {
	g := startGateway(t)
	const n = 1003
	for i := range n {
		g.call("PUT", fmt.Sprintf("/v1/boards/b%04d", i), `{}`, nil)
	}
	ctx := browser(t, 1200, 1000)
	do(t, ctx, chromedp.Navigate(g.url("/console")))
	consoleSignIn(t, ctx, g)
	rows := func() string {
		return js[string](t, ctx, `(() => { const r = document.getElementById("board-rows").rows;
			return r.length + " " + (r.length ? r[r.length-1].cells[0].textContent : "") + " " + document.getElementById("more-boards").hidden })()`)
	}
	waitFor(t, "the first page", 10*time.Second, func() string {
		if s := rows(); s != "1000 b0999 false" {
			return "rows, last, more hidden: " + s
		}
		return ""
	})
	js[bool](t, ctx, `(() => { document.getElementById("more-boards").click(); return true })()`)
	waitFor(t, "every board", 10*time.Second, func() string {
		if s := rows(); s != fmt.Sprintf("%d b%04d true", n, n-1) {
			return "rows, last, more hidden: " + s
		}
		return ""
	})
}

// consoleSignIn signs the console in with an admin token.
func consoleSignIn(t *testing.T, ctx context.Context, g *gateway) {
	t.Helper()
	tok := g.token("ops", auth.RoleAdmin, time.Now().Add(time.Hour))
	js[bool](t, ctx, fmt.Sprintf(`(() => { document.getElementById("token").value = %q; document.getElementById("signin-form").requestSubmit(); return true })()`, tok))
}
