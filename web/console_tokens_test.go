package web_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestConsoleMintsToken: the console mints a read token for one board and
// a subject, shows it once with a copy button, and the token works against
// the API as asked: it reads its board, and is refused another board and
// a write. A board outside the signed-in token's reach is refused at the
// boards field; hiding the token empties the page of it.
func TestConsoleMintsToken(t *testing.T) {
	g := startGateway(t)
	g.call("PUT", "/v1/boards/cup", `{}`, nil)
	g.call("PUT", "/v1/boards/other", `{}`, nil)
	g.call("POST", "/v1/boards/cup/scores", `{"scores":[{"member":"p1","score":1234}]}`, nil)
	ctx := openConsole(t, g)
	fill(t, ctx, map[string]string{"m-boards": "cup", "m-sub": "p1", "m-ttl": "1h"})
	run(t, ctx, `document.getElementById("m-role").value = "read"; document.getElementById("mint-form").requestSubmit()`)
	var tok string
	waitFor(t, "the minted token", 10*time.Second, func() string {
		tok = js[string](t, ctx, `document.getElementById("minted").hidden ? "" : document.getElementById("minted-token").value`)
		if tok == "" {
			return "none shown; form error " + js[string](t, ctx, `document.getElementById("mint-form").textContent.replace(/\s+/g, " ").slice(0, 300)`)
		}
		return ""
	})
	what := js[string](t, ctx, `document.getElementById("minted-what").textContent`)
	if !strings.Contains(what, "A read token of tenant casino-a for p1, boards cup") {
		t.Errorf("the minted token described as %q", what)
	}
	for _, c := range []struct {
		method, path, body string
		want               int
		has                string
	}{
		{"GET", "/v1/boards/cup/top", "", 200, `"member":"p1"`},
		{"GET", "/v1/boards/other/top", "", 403, "forbidden"},
		{"POST", "/v1/boards/cup/scores", `{"member":"p2","score":1}`, 403, "forbidden"},
	} {
		if code, body := callWith(t, tok, c.method, g.url(c.path), c.body); code != c.want || !strings.Contains(body, c.has) {
			t.Errorf("%s %s with the minted token: %d %s, want %d", c.method, c.path, code, body, c.want)
		}
	}
	run(t, ctx, `document.getElementById("copy-token").click()`)
	waitFor(t, "the copy button's answer", 10*time.Second, func() string {
		if s := js[string](t, ctx, `document.getElementById("copy-state").textContent`); s == "" {
			return "nothing said"
		}
		return ""
	})
	run(t, ctx, `document.getElementById("hide-token").click()`)
	if s := js[string](t, ctx, `document.getElementById("minted-token").value + document.body.innerText`); strings.Contains(s, tok) {
		t.Error("the token stays on the page after Hide")
	}

	// An over-long ttl is refused at its field.
	fill(t, ctx, map[string]string{"m-boards": "", "m-sub": "", "m-ttl": "9000h"})
	run(t, ctx, `document.getElementById("mint-form").requestSubmit()`)
	waitFor(t, "the ttl refused at its field", 10*time.Second, func() string {
		if s := js[string](t, ctx, `document.getElementById("m-ttl").getAttribute("aria-invalid") + " " + document.querySelector('[data-path="ttl"]').textContent`); !strings.HasPrefix(s, "true") || !strings.Contains(s, "ttl:") {
			return fmt.Sprintf("%q", s)
		}
		return ""
	})
}

// callWith sends a request with tok and returns the status and the body.
func callWith(t *testing.T, tok, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}
