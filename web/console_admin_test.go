package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rankwire/rankwire/auth"
)

// The console's back-office tests: each drives the console in Chromium
// against a real gateway and checks what the API answers afterwards.

// status sends a request with an admin token and returns the status and
// the body, whatever the status.
func (g *gateway) status(method, path, body string) (int, string) {
	g.t.Helper()
	req, _ := http.NewRequest(method, g.url(path), strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+g.token("admin", auth.RoleAdmin, time.Now().Add(time.Hour)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// openConsole opens the console in Chromium, signed in, with its boards
// listed.
func openConsole(t *testing.T, g *gateway) context.Context {
	t.Helper()
	ctx := browser(t, 1200, 1000)
	do(t, ctx, chromedp.Navigate(g.url("/console")))
	waitFor(t, "console.js", 10*time.Second, func() string {
		if js[bool](t, ctx, `window.consoleReady === true`) {
			return ""
		}
		return "not run"
	})
	consoleSignIn(t, ctx, g)
	waitFor(t, "the boards", 10*time.Second, func() string {
		if js[bool](t, ctx, `!document.getElementById("boards").hidden`) {
			return ""
		}
		return "hidden: " + js[string](t, ctx, `document.getElementById("alert").textContent`)
	})
	return ctx
}

// run evaluates statements in the page (for their effect).
func run(t *testing.T, ctx context.Context, stmts string) {
	t.Helper()
	js[bool](t, ctx, "(() => { "+stmts+"; return true })()")
}

// fill sets form fields by id.
func fill(t *testing.T, ctx context.Context, fields map[string]string) {
	t.Helper()
	for id, v := range fields {
		run(t, ctx, fmt.Sprintf(`document.getElementById(%q).value = %q`, id, v))
	}
}

// openBoardInConsole clicks a board's Open button and waits for its settings.
func openBoardInConsole(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	waitFor(t, "board "+name+" listed", 10*time.Second, func() string {
		if js[bool](t, ctx, fmt.Sprintf(`!!document.querySelector('#board-rows tr[data-board=%q] button')`, name)) {
			return ""
		}
		return "not listed"
	})
	run(t, ctx, fmt.Sprintf(`document.querySelector('#board-rows tr[data-board=%q] button').click()`, name))
	waitFor(t, "board "+name+" open", 10*time.Second, func() string {
		if s := js[string](t, ctx, `document.getElementById("board-h").textContent + " " + document.getElementById("settings").rows.length`); s != "Board "+name+" 10" {
			return s
		}
		return ""
	})
}

// boardSettings is what GET /v1/boards/{b} answers, as the tests compare it.
type boardSettings struct {
	Order    string           `json:"order"`
	Policy   string           `json:"policy"`
	Windows  []string         `json:"windows"`
	Retain   int              `json:"retention"`
	StartsAt string           `json:"starts_at"`
	EndsAt   string           `json:"ends_at"`
	Prizes   []map[string]any `json:"prizes"`
	Rules    map[string]any   `json:"rules"`
}

// awaitBoard waits until GET /v1/boards/{b} answers want.
func awaitBoard(t *testing.T, g *gateway, ctx context.Context, b string, want boardSettings) {
	t.Helper()
	waitFor(t, "board "+b+"'s settings", 10*time.Second, func() string {
		code, body := g.status("GET", "/v1/boards/"+b, "")
		var got boardSettings
		_ = json.Unmarshal([]byte(body), &got)
		if code != 200 || !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("%d %s; console: %q %q", code, body, js[string](t, ctx, `document.getElementById("alert").textContent`),
				js[string](t, ctx, `[...document.querySelectorAll("#board-form .field-error")].map((p) => p.textContent).join("|")`))
		}
		return ""
	})
}

// TestConsoleCreatesAndEditsBoard: a board made with the form, in a browser
// whose zone is Auckland (UTC+13 in December), has the settings the form
// shows, its local times stored in UTC; the board's page shows them in
// local time with the UTC value in the title; an edit changes them; an
// invalid prize range and a refused order change are shown next to the
// field the API names, and change nothing.
func TestConsoleCreatesAndEditsBoard(t *testing.T) {
	t.Setenv("TZ", "Pacific/Auckland") // Chromium inherits it
	g := startGateway(t)
	ctx := openConsole(t, g)
	run(t, ctx, `document.getElementById("new-board").click()`)
	fill(t, ctx, map[string]string{"f-name": "cup-final", "f-order": "asc", "f-policy": "latest", "f-retention": "4",
		"f-starts_at": "2026-12-01T13:00:00", "f-ends_at": "2026-12-08T13:00:00",
		"f-min_score": "0", "f-max_score": "1000000", "f-max_step": "50000", "f-max_per_minute": "60"})
	run(t, ctx, `for (const c of document.getElementsByName("window")) c.checked = ["all", "week"].includes(c.value);
		const add = document.getElementById("add-prize"); add.click(); add.click();
		const r = document.getElementById("prize-rows").rows;
		[["1", "1", "€10,000"], ["2", "10", "€1,000"]].forEach(([f, to, p], i) => {
			r[i].querySelector(".prize-from").value = f; r[i].querySelector(".prize-to").value = to; r[i].querySelector(".prize-prize").value = p; });
		document.getElementById("board-form").requestSubmit()`)
	want := boardSettings{Order: "asc", Policy: "latest", Windows: []string{"all", "week"}, Retain: 4,
		StartsAt: "2026-12-01T00:00:00.000Z", EndsAt: "2026-12-08T00:00:00.000Z",
		Prizes: []map[string]any{{"from": 1.0, "to": 1.0, "prize": "€10,000"}, {"from": 2.0, "to": 10.0, "prize": "€1,000"}},
		Rules:  map[string]any{"min_score": 0.0, "max_score": 1e6, "max_step": 50000.0, "max_per_minute": 60.0}}
	awaitBoard(t, g, ctx, "cup-final", want)

	waitFor(t, "the board's page", 10*time.Second, func() string {
		s := js[string](t, ctx, `(() => { const t = document.querySelector('#settings tr[data-setting="Ends"] time');
			if (!t) return "no time";
			const local = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium", timeZone: "Pacific/Auckland" }).format(new Date(t.dateTime));
			return t.title + " | " + (t.textContent === local) + " | " + document.getElementById("prizes").textContent })()`)
		if s != "UTC 2026-12-08T00:00:00.000Z | true | rank 1€10,000ranks 2–10€1,000" {
			return s
		}
		return ""
	})

	// Edit: the form starts from the board's settings.
	run(t, ctx, `document.getElementById("edit-board").click()`)
	if s := js[string](t, ctx, `["f-name", "f-order", "f-starts_at", "f-max_step"].map((id) => document.getElementById(id).value).join(" ") + " " + document.getElementById("f-name").disabled + " " + document.getElementById("prize-rows").rows.length`); s != "cup-final asc 2026-12-01T13:00 50000 true 2" {
		t.Errorf("edit form: %q", s)
	}
	fill(t, ctx, map[string]string{"f-retention": "6", "f-max_step": "60000"})
	run(t, ctx, `document.querySelector("#prize-rows tr:last-child button").click(); document.getElementById("board-form").requestSubmit()`)
	want.Retain, want.Prizes, want.Rules["max_step"] = 6, want.Prizes[:1], 60000.0
	awaitBoard(t, g, ctx, "cup-final", want)
	waitFor(t, "the board's page after the edit", 10*time.Second, func() string {
		if s := js[string](t, ctx, `document.querySelector('#settings tr[data-setting="Past windows kept"] td').textContent + " " + document.getElementById("editor").hidden`); s != "6 true" {
			return s
		}
		return ""
	})

	// A range whose end is before its start: the API's message names
	// prizes[1].to, and the console puts it after that input.
	run(t, ctx, `document.getElementById("edit-board").click(); document.getElementById("add-prize").click();
		const r = document.getElementById("prize-rows").rows[1];
		r.querySelector(".prize-from").value = "5"; r.querySelector(".prize-to").value = "3"; r.querySelector(".prize-prize").value = "x";
		document.getElementById("board-form").requestSubmit()`)
	waitFor(t, "the prize error", 10*time.Second, func() string {
		s := js[string](t, ctx, `(() => { const to = document.getElementById("prize-rows").rows[1].querySelector(".prize-to");
			return to.getAttribute("aria-invalid") + " " + (to.nextElementSibling ? to.nextElementSibling.textContent : "none") })()`)
		if !strings.HasPrefix(s, "true prizes[1].to: 3 is not in 5..") {
			return s
		}
		return ""
	})
	awaitBoard(t, g, ctx, "cup-final", want)
}

// TestConsoleShowsConflictAtField: changing the order of a board with
// entries is a 409 naming order; the console shows it under the order
// field and the board keeps its order; a good edit keeps the order of its
// windows.
func TestConsoleShowsConflictAtField(t *testing.T) {
	g := startGateway(t)
	g.call("PUT", "/v1/boards/plain", `{"windows":["week","all"]}`, nil)
	g.call("POST", "/v1/boards/plain/scores", `{"member":"p1","score":10}`, nil)
	ctx := openConsole(t, g)
	openBoardInConsole(t, ctx, "plain")
	run(t, ctx, `document.getElementById("edit-board").click(); document.getElementById("f-order").value = "asc";
		document.getElementById("board-form").requestSubmit()`)
	waitFor(t, "the order error", 10*time.Second, func() string {
		s := js[string](t, ctx, `(() => { const f = document.querySelector('#board-form [data-path="order"]');
			return f.querySelector("select").getAttribute("aria-invalid") + " " + f.querySelector(".field-error")?.textContent })()`)
		if !strings.HasPrefix(s, `true order: "desc" cannot become "asc"`) || !strings.HasSuffix(s, "(conflict)") {
			return s
		}
		return ""
	})
	if code, body := g.status("GET", "/v1/boards/plain", ""); code != 200 || !strings.Contains(body, `"order":"desc"`) {
		t.Errorf("board after a refused edit: %d %s", code, body)
	}
	// The first window is the primary one: an edit keeps the board's
	// order of windows and adds a newly checked kind after them.
	run(t, ctx, `document.getElementById("f-order").value = "desc";
		for (const c of document.getElementsByName("window")) if (c.value === "day") c.checked = true;
		document.getElementById("board-form").requestSubmit()`)
	awaitAPI(t, g, ctx, "/v1/boards/plain", 200, `"windows":["week","all","day"]`)
}

// held returns the qids of board b's quarantine, by member.
func held(t *testing.T, g *gateway, b string) map[string]string {
	t.Helper()
	var q struct {
		Rows []struct{ QID, Member string }
	}
	g.call("GET", "/v1/boards/"+b+"/quarantine", "", &q)
	out := map[string]string{}
	for _, r := range q.Rows {
		out[r.Member] = r.QID
	}
	return out
}

// awaitAPI waits until GET path answers code with a body holding each of want.
func awaitAPI(t *testing.T, g *gateway, ctx context.Context, path string, code int, want ...string) {
	t.Helper()
	waitFor(t, "GET "+path, 10*time.Second, func() string {
		c, body := g.status("GET", path, "")
		ok := c == code
		for _, w := range want {
			ok = ok && strings.Contains(body, w)
		}
		if !ok {
			return fmt.Sprintf("%d %s; console alert %q", c, body, js[string](t, ctx, `document.getElementById("alert").textContent`))
		}
		return ""
	})
}

// TestConsoleDecidesQuarantine: approving a held submission in the console
// ranks it (the member's read shows its score), rejecting one drops it
// from the quarantine; both are listed with the API's answer; scores are
// formatted with Intl.NumberFormat.
func TestConsoleDecidesQuarantine(t *testing.T) {
	g := startGateway(t)
	g.call("PUT", "/v1/boards/cup", `{"rules":{"max_score":1000}}`, nil)
	g.call("POST", "/v1/boards/cup/scores", `{"scores":[{"member":"p1","score":100},{"member":"p3","score":5000},{"member":"p4","score":9000}]}`, nil)
	qids := held(t, g, "cup")
	if len(qids) != 2 {
		t.Fatalf("held %v, want p3 and p4", qids)
	}
	ctx := openConsole(t, g)
	openBoardInConsole(t, ctx, "cup")
	waitFor(t, "the held rows", 10*time.Second, func() string {
		s := js[string](t, ctx, `[...document.getElementById("held-rows").rows].map((r) => r.cells[2].textContent === new Intl.NumberFormat().format(Number(r.cells[1].textContent === "p3" ? 5000 : 9000))).join(",")`)
		if s != "true,true" {
			return "formatted scores: " + s
		}
		return ""
	})
	decideInConsole(t, ctx, qids["p3"], "approve", "ticket 7: a real win")
	awaitAPI(t, g, ctx, "/v1/boards/cup/members/p3", 200, `"score":5000`, `"rank":1`)
	decideInConsole(t, ctx, qids["p4"], "reject", "")
	waitFor(t, "p4 gone from the quarantine", 10*time.Second, func() string {
		if q := held(t, g, "cup"); len(q) != 0 {
			return fmt.Sprintf("held %v", q)
		}
		if n := js[int](t, ctx, `document.getElementById("held-rows").rows.length`); n != 0 {
			return fmt.Sprintf("%d rows shown", n)
		}
		return ""
	})
	if c, _ := g.status("GET", "/v1/boards/cup/members/p4", ""); c != 404 {
		t.Errorf("rejected p4's read: %d, want 404", c)
	}
	got := js[string](t, ctx, `document.getElementById("decisions").textContent`)
	for _, want := range []string{"Rejected qid " + qids["p4"] + ": p4's", "Approved qid " + qids["p3"] + ": p3 now rank 1 with"} {
		if !strings.Contains(got, want) {
			t.Errorf("decisions %q lack %q", got, want)
		}
	}
	// The audit, in the API and in the console: who decided what, and why.
	awaitAPI(t, g, ctx, "/v1/audit?board=cup", 200, `"action":"approve"`, `"qid":"`+qids["p3"]+`"`, `"reason":"ticket 7: a real win"`,
		`"action":"reject"`, `"qid":"`+qids["p4"]+`"`, `"sub":"ops"`)
	waitFor(t, "the decisions in the console's audit", 10*time.Second, func() string {
		s := js[string](t, ctx, `[...document.getElementById("audit-rows").rows].map((r) => [...r.cells].slice(1, 5).map((c) => c.textContent).join("/")).join(" | ")`)
		want := "ops/approve qid " + qids["p3"] + "/p3/ticket 7: a real win | ops/reject qid " + qids["p4"] + "/p4/"
		if s != want {
			return fmt.Sprintf("%q, want %q", s, want)
		}
		return ""
	})
}

// decideInConsole approves or rejects (verb) the held row qid in the
// console: the row's button, then the reason (optional) and the
// confirmation.
func decideInConsole(t *testing.T, ctx context.Context, qid, verb, reason string) {
	t.Helper()
	row := fmt.Sprintf(`#held-rows tr[data-qid=%q]`, qid)
	first := map[string]string{"approve": "button", "reject": "button.danger"}[verb]
	// The first click shows the reason's field; the panel may render its
	// rows again meanwhile (a reload after the previous decision), which
	// takes the field away: click again until the field is there.
	waitFor(t, verb+" qid "+qid+": the reason's field", 10*time.Second, func() string {
		return js[string](t, ctx, fmt.Sprintf(`(() => {
			const field = document.querySelector('%s input.reason');
			if (field) { field.value = %q; document.querySelector('%s button.danger').click(); return ""; }
			const b = document.querySelector('%s %s');
			if (b) b.click();
			return "not shown yet";
		})()`, row, reason, row, row, first))
	})
}

// TestConsoleEditsMembers: a member found by id shows its entry and the
// rows around it; its profile saved in the console is what the profile
// read answers, clearing keeps the name only, a bad avatar is shown at
// the avatar field; removing it (after the confirmation) makes its read
// 404.
func TestConsoleEditsMembers(t *testing.T) {
	g := startGateway(t)
	g.call("PUT", "/v1/boards/cup", `{}`, nil)
	g.call("POST", "/v1/boards/cup/scores", `{"scores":[{"member":"p1","score":1234567},{"member":"p2","score":20},{"member":"p3","score":30}]}`, nil)
	ctx := openConsole(t, g)
	openBoardInConsole(t, ctx, "cup")
	run(t, ctx, `document.getElementById("member").value = "p1"; document.getElementById("member-form").requestSubmit()`)
	waitFor(t, "p1's entry and the rows around it", 10*time.Second, func() string {
		s := js[string](t, ctx, `document.getElementById("member-row").textContent + " | " + [...document.getElementById("member-rows").rows].map((r) => r.cells[1].textContent).join(",")
			+ " | " + document.getElementById("profile-state").textContent`)
		want := js[string](t, ctx, `"p1: rank 1 of 3, score " + new Intl.NumberFormat().format(1234567)`)
		if !strings.HasPrefix(s, want) || !strings.HasSuffix(s, " | p1,p3,p2 | No profile yet.") {
			return s
		}
		return ""
	})
	fill(t, ctx, map[string]string{"p-name": "Ann", "p-avatar": "https://cdn.example/a.png", "p-country": "mt"})
	run(t, ctx, `document.getElementById("profile-form").requestSubmit()`)
	awaitAPI(t, g, ctx, "/v1/members/p1/profile", 200, `{"name":"Ann","avatar":"https://cdn.example/a.png","country":"MT"}`)
	saved := func(country string) {
		t.Helper()
		// The console fills the form from the PUT's answer: a field
		// changed before that answer arrives would be overwritten.
		waitFor(t, "the console's answer", 10*time.Second, func() string {
			if s := js[string](t, ctx, `document.getElementById("profile-state").textContent + " " + document.getElementById("p-country").value`); s != "Saved: Ann "+country {
				return s
			}
			return ""
		})
	}
	saved("MT")
	run(t, ctx, `document.getElementById("profile-clear").click()`)
	awaitAPI(t, g, ctx, "/v1/members/p1/profile", 200, `{"name":"Ann"}`)
	saved("")

	fill(t, ctx, map[string]string{"p-avatar": "http://cdn.example/a.png"})
	run(t, ctx, `document.getElementById("profile-form").requestSubmit()`)
	waitFor(t, "the avatar error", 10*time.Second, func() string {
		s := js[string](t, ctx, `(() => { const f = document.querySelector('#profile-form [data-path="avatar"]');
			return f.querySelector("input").getAttribute("aria-invalid") + " " + f.querySelector(".field-error")?.textContent })()`)
		if !strings.HasPrefix(s, `true avatar: "http://cdn.example/a.png" is not an https URL`) {
			return s
		}
		return ""
	})

	run(t, ctx, `document.querySelector("#remove-slot button").click()`)
	if s := js[string](t, ctx, `document.getElementById("remove-slot").textContent`); !strings.Contains(s, "Remove p1 from board cup?") {
		t.Fatalf("confirmation %q", s)
	}
	if c, _ := g.status("GET", "/v1/boards/cup/members/p1", ""); c != 200 {
		t.Fatalf("p1 read %d before the confirmation", c)
	}
	run(t, ctx, `document.querySelector("#remove-slot button.danger").click()`)
	awaitAPI(t, g, ctx, "/v1/boards/cup/members/p1", 404)
	waitFor(t, "the console's p1", 10*time.Second, func() string {
		if s := js[string](t, ctx, `document.getElementById("member-row").textContent`); s != "p1: no entry on board cup." {
			return s
		}
		return ""
	})
}

// TestConsoleDeletesBoard: "Delete board" asks first; once confirmed the
// board's read 404s and the list no longer shows it.
func TestConsoleDeletesBoard(t *testing.T) {
	g := startGateway(t)
	g.call("PUT", "/v1/boards/old", `{}`, nil)
	ctx := openConsole(t, g)
	openBoardInConsole(t, ctx, "old")
	run(t, ctx, `document.querySelector("#delete-slot button").click()`)
	if c, _ := g.status("GET", "/v1/boards/old", ""); c != 200 {
		t.Fatalf("board read %d before the confirmation", c)
	}
	run(t, ctx, `document.querySelector("#delete-slot button.danger").click()`)
	awaitAPI(t, g, ctx, "/v1/boards/old", 404)
	waitFor(t, "the list without it", 10*time.Second, func() string {
		if s := js[string](t, ctx, `document.getElementById("board-rows").textContent + " " + document.getElementById("board").hidden`); s != " true" {
			return s
		}
		return ""
	})
}

// TestConsoleErasesPersonalData: "Erase personal data" asks first; once
// confirmed the member's profile and alias read 404, its entry stays, and
// the console says what it erased.
func TestConsoleErasesPersonalData(t *testing.T) {
	g := startGateway(t)
	g.call("PUT", "/v1/boards/cup", `{}`, nil)
	g.call("POST", "/v1/boards/cup/scores", `{"scores":[{"member":"p1","score":10},{"member":"p2","score":20}]}`, nil)
	g.call("POST", "/v1/identities", `{"member":"p1","aliases":["email:ann@x.io"]}`, nil)
	g.call("PUT", "/v1/members/p1/profile", `{"name":"Ann"}`, nil)
	ctx := openConsole(t, g)
	openBoardInConsole(t, ctx, "cup")
	run(t, ctx, `document.getElementById("member").value = "email:ann@x.io"; document.getElementById("member-form").requestSubmit()`)
	waitFor(t, "p1's profile and the erase button", 10*time.Second, func() string {
		s := js[string](t, ctx, `document.getElementById("member-row").textContent + " | " + document.getElementById("p-name").value
			+ " | " + document.querySelector("#erase-slot button")?.textContent`)
		if !strings.HasPrefix(s, "p1: rank 2 of 2, score 10") || !strings.HasSuffix(s, " | Ann | Erase personal data") {
			return s
		}
		return ""
	})
	run(t, ctx, `document.querySelector("#erase-slot button").click()`)
	if s := js[string](t, ctx, `document.getElementById("erase-slot").textContent`); !strings.Contains(s, "Erase the personal data of email:ann@x.io?") {
		t.Fatalf("confirmation %q", s)
	}
	if c, _ := g.status("GET", "/v1/members/p1/profile", ""); c != 200 {
		t.Fatalf("p1's profile read %d before the confirmation", c)
	}
	run(t, ctx, `document.querySelector("#erase-slot button.danger").click()`)
	awaitAPI(t, g, ctx, "/v1/members/p1/profile", 404)
	awaitAPI(t, g, ctx, "/v1/identities/email:ann@x.io", 404)
	awaitAPI(t, g, ctx, "/v1/boards/cup/members/p1", 200, `"score":10`)
	waitFor(t, "the console's notice", 10*time.Second, func() string {
		s := js[string](t, ctx, `document.getElementById("notice").textContent + " | " + document.getElementById("member-h").textContent + " | " + document.getElementById("profile-state").textContent`)
		if s != "Erased the personal data of p1: its profile and 1 alias. | Member p1 | No profile yet." {
			return s
		}
		return ""
	})
}
