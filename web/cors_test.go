package web_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rankwire/rankwire/auth"
)

// lobbyPage serves a blank page from an origin of its own (another port
// than the gateway's), as a casino's lobby would be served.
func lobbyPage(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!doctype html><title>lobby</title>"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// fetchTop is the script a lobby page runs: GET the board's top with a
// bearer token (which makes Chromium send a preflight first), resolving
// to the JSON read or to "blocked: " and the fetch's error.
func fetchTop(gateway, board, token string) string {
	return fmt.Sprintf(`fetch(%q, {headers: {Authorization: "Bearer " + %q}})
		.then(r => r.json()).then(j => JSON.stringify(j), e => "blocked: " + e)`,
		gateway+"/v1/boards/"+board+"/top", token)
}

// TestCorsLobbyReadsTop: a page of an allowed origin reads the REST API
// with a bearer token; a page of another origin cannot (the browser
// blocks it: no Access-Control-Allow-Origin, and its preflight gets 403).
func TestCorsLobbyReadsTop(t *testing.T) {
	lobby, stranger := lobbyPage(t), lobbyPage(t)
	g := startGatewayWith(t, gatewayOpts{origins: []string{strings.TrimPrefix(lobby.URL, "http://")}})
	g.call("PUT", "/v1/boards/cors", `{}`, nil)
	g.call("POST", "/v1/boards/cors/scores", `{"member":"alice","score":42}`, nil)
	tok := g.token("page", auth.RoleRead, time.Now().Add(time.Hour))
	ctx := browser(t, 800, 600)

	do(t, ctx, chromedp.Navigate(lobby.URL))
	waitFor(t, "the lobby page reads alice's row", 10*time.Second, func() string {
		got := js[string](t, ctx, fetchTop(g.URL(), "cors", tok))
		if !strings.Contains(got, `"member":"alice"`) || !strings.Contains(got, `"score":42`) {
			return got
		}
		return ""
	})

	do(t, ctx, chromedp.Navigate(stranger.URL))
	if got := js[string](t, ctx, fetchTop(g.URL(), "cors", tok)); !strings.HasPrefix(got, "blocked: TypeError") {
		t.Fatalf("a page of an origin not allowed read the API: %s", got)
	}
}
