package web_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rankwire/rankwire/auth"
)

// TestConsoleRendersDataAsText: a member id, a profile name and a prize
// label that hold markup are shown as text in every place the console
// shows them (board's prizes, standings, quarantine, rows around, member
// heading, profile form): no element is made from them. A board name cannot hold
// markup at all: the API refuses it.
func TestConsoleRendersDataAsText(t *testing.T) {
	const xss = `<img src=x onerror=window.pwned=1>`
	g := startGateway(t)
	if c, body := g.status("PUT", "/v1/boards/"+url.PathEscape(xss), `{}`); c != 400 {
		t.Errorf("a board named %q: %d %s, want 400", xss, c, body)
	}
	g.call("PUT", "/v1/boards/cup", fmt.Sprintf(`{"rules":{"max_score":1000},"prizes":[{"from":1,"to":1,"prize":%q}]}`, xss), nil)
	g.call("POST", "/v1/boards/cup/scores", fmt.Sprintf(`{"scores":[{"member":%q,"score":10},{"member":%[1]q,"score":9000},{"member":"p2","score":5}]}`, xss), nil)
	g.call("PUT", "/v1/members/"+url.PathEscape(xss)+"/profile", fmt.Sprintf(`{"name":%q}`, xss), nil)
	ctx := openConsole(t, g)
	openBoardInConsole(t, ctx, "cup")
	run(t, ctx, fmt.Sprintf(`document.getElementById("member").value = %q; document.getElementById("member-form").requestSubmit()`, xss))
	waitFor(t, "the member", 10*time.Second, func() string {
		if s := js[string](t, ctx, `document.getElementById("p-name").value`); s != xss {
			return "profile name " + s
		}
		return ""
	})
	for _, where := range []string{"prizes", "standing-rows", "held-rows", "member-rows", "member-h", "member-row"} {
		if s := js[string](t, ctx, fmt.Sprintf(`document.getElementById(%q).textContent`, where)); !strings.Contains(s, xss) {
			t.Errorf("#%s shows %q, want the text %q", where, s, xss)
		}
	}
	if n := js[int](t, ctx, `document.querySelectorAll("img").length`); n != 0 {
		t.Errorf("%d img elements in the console", n)
	}
	if js[bool](t, ctx, `window.pwned !== undefined`) {
		t.Error("the markup ran")
	}
}

// TestConsoleSession: the token is kept in sessionStorage only (nothing in
// localStorage), its tenant, roles and expiry are shown decoded (and said
// to be unverified), a reload stays signed in, sign-out forgets it and a
// reload after it stays signed out; a refused token is not kept.
func TestConsoleSession(t *testing.T) {
	g := startGateway(t)
	ctx := browser(t, 1200, 1000)
	do(t, ctx, chromedp.Navigate(g.url("/console")))
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	tok := g.token("ops", auth.RoleAdmin, exp)
	signIn := func(tok string) {
		run(t, ctx, fmt.Sprintf(`document.getElementById("token").value = %q; document.getElementById("signin-form").requestSubmit()`, tok))
	}
	state := func() string {
		return js[string](t, ctx, `[document.getElementById("boards").hidden, document.getElementById("signin").hidden,
			sessionStorage.getItem("rankwire-console-token") !== null, localStorage.length].join(" ")`)
	}
	await := func(what, want string) {
		t.Helper()
		waitFor(t, what, 10*time.Second, func() string {
			if s := state(); s != want {
				return "boards hidden, sign-in hidden, token kept, localStorage items: " + s
			}
			return ""
		})
	}
	signIn(tok[:len(tok)-2] + "xx")
	waitFor(t, "the refusal", 10*time.Second, func() string {
		if s := js[string](t, ctx, `document.getElementById("alert").textContent`); !strings.HasPrefix(s, "Sign-in refused: unauthorized") {
			return s
		}
		return ""
	})
	await("a refused token not kept", "true false false 0")
	signIn(tok)
	await("signed in", "false true true 0")
	if s := js[string](t, ctx, `sessionStorage.getItem("rankwire-console-token")`); s != tok {
		t.Errorf("sessionStorage holds %q", s)
	}
	who := js[string](t, ctx, `(() => { const w = document.getElementById("who"); return w.textContent + " | " + w.querySelector("time").title })()`)
	for _, want := range []string{"tenant casino-a", "roles admin", "(decoded, not verified)", "| UTC " + exp.UTC().Format("2006-01-02T15:04:05.000Z")} {
		if !strings.Contains(who, want) {
			t.Errorf("who %q lacks %q", who, want)
		}
	}
	do(t, ctx, chromedp.Reload())
	await("signed in after a reload", "false true true 0")
	run(t, ctx, `document.getElementById("signout").click()`)
	await("signed out", "true false false 0")
	if s := js[string](t, ctx, `document.getElementById("who").textContent + document.getElementById("token").value`); s != "" {
		t.Errorf("after sign-out the page shows %q", s)
	}
	do(t, ctx, chromedp.Reload())
	waitFor(t, "console.js", 10*time.Second, func() string {
		if js[bool](t, ctx, `window.consoleReady === true`) {
			return ""
		}
		return "not run"
	})
	await("signed out after a reload", "true false false 0")
}

// TestConsoleSearchesBoards: a name prefix lists the boards whose name
// starts with it (the board of that very name included), none for a
// prefix no board name can start with; an empty search lists them all.
// Each search's answer differs from the one before it, so a search that
// did not run fails.
func TestConsoleSearchesBoards(t *testing.T) {
	g := startGateway(t)
	for _, b := range []string{"alpha", "alpha-2", "alphabet", "b-1", "beta"} {
		g.call("PUT", "/v1/boards/"+b, `{}`, nil)
	}
	ctx := openConsole(t, g)
	for _, tt := range []struct{ prefix, want string }{
		{"alpha", "alpha,alpha-2,alphabet"}, {"Alpha", ""}, {"alpha-", "alpha-2"}, {"zz", ""}, {"b", "b-1,beta"},
		{"", "alpha,alpha-2,alphabet,b-1,beta"},
	} {
		run(t, ctx, fmt.Sprintf(`document.getElementById("board-rows").replaceChildren(); document.getElementById("board-prefix").value = %q;
			document.getElementById("board-search").requestSubmit()`, tt.prefix))
		waitFor(t, "search "+tt.prefix, 10*time.Second, func() string {
			s := js[string](t, ctx, `[...document.getElementById("board-rows").rows].map((r) => r.dataset.board).join(",") + " " + document.getElementById("boards-empty").hidden`)
			if want := fmt.Sprintf("%s %t", tt.want, tt.want != ""); s != want {
				return fmt.Sprintf("%q, want %q", s, want)
			}
			return ""
		})
	}
}
