package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The console's dispute tests: disqualify, reinstate and settle clicked in
// Chromium against a real gateway, checked against what the API's
// standings and audit answer afterwards.

// cupPrizes are the test boards' prizes: one for each of the top three.
const cupPrizes = `"prizes":[{"from":1,"to":1,"prize":"€100"},{"from":2,"to":2,"prize":"€50"},{"from":3,"to":3,"prize":"€25"}]`

// xssReason is a reason that would run script if rendered as markup.
const xssReason = `<img src=x onerror="window.pwned=1">ticket 4411`

// endedCup makes a tournament board with p1..p4 ranked in that order,
// then moves its end two minutes into the past so that its standings are
// final (65 s after the end) from the start of the test.
func endedCup(g *gateway, name string) {
	g.call("PUT", "/v1/boards/"+name, `{`+cupPrizes+`}`, nil)
	g.call("POST", "/v1/boards/"+name+"/scores", `{"scores":[{"member":"p1","score":400},{"member":"p2","score":300},{"member":"p3","score":200},{"member":"p4","score":100}]}`, nil)
	end := time.Now().Add(-2 * time.Minute).UTC().Format(time.RFC3339Nano)
	g.call("PUT", "/v1/boards/"+name, fmt.Sprintf(`{"ends_at":%q,%s}`, end, cupPrizes), nil)
}

// standingsTable is the API's standings as "member:rank:prize" and its
// revision and settled flag.
func standingsTable(t *testing.T, g *gateway, board string) string {
	t.Helper()
	var s struct {
		Settled  bool `json:"settled"`
		Revision int  `json:"revision"`
		Rows     []struct {
			Member string `json:"member"`
			Rank   int    `json:"rank"`
			Prize  string `json:"prize"`
		} `json:"rows"`
	}
	g.call("GET", "/v1/boards/"+board+"/standings", "", &s)
	parts := []string{fmt.Sprintf("r%d settled=%v", s.Revision, s.Settled)}
	for _, r := range s.Rows {
		parts = append(parts, fmt.Sprintf("%s:%d:%s", r.Member, r.Rank, r.Prize))
	}
	return strings.Join(parts, " ")
}

// awaitStandings waits until the API's standings are want and the
// console's standings rows list the members of wantShown, in order.
func awaitStandings(t *testing.T, g *gateway, ctx context.Context, board, want, wantShown string) {
	t.Helper()
	waitFor(t, "standings "+want, 10*time.Second, func() string {
		got := standingsTable(t, g, board)
		shown := js[string](t, ctx, `[...document.querySelectorAll("#standing-rows tr")].map((r) => r.dataset.member).join(",")`)
		if got != want || shown != wantShown {
			return fmt.Sprintf("API %q, console %q; alert %q", got, shown, js[string](t, ctx, `document.getElementById("alert").textContent`))
		}
		return ""
	})
}

// clickIn clicks the button labelled label inside the element sel finds.
func clickIn(t *testing.T, ctx context.Context, sel, label string) {
	t.Helper()
	waitFor(t, label+" in "+sel, 10*time.Second, func() string {
		if js[bool](t, ctx, fmt.Sprintf(`(() => { const b = [...document.querySelectorAll(%q + " button")].find((b) => b.textContent === %q); if (b) b.click(); return !!b })()`, sel, label)) {
			return ""
		}
		return "no such button: " + js[string](t, ctx, fmt.Sprintf(`document.querySelector(%q)?.textContent ?? "no element"`, sel))
	})
}

// answerReason fills the open reason field in sel and confirms it.
func answerReason(t *testing.T, ctx context.Context, sel, reason, yes string) {
	t.Helper()
	run(t, ctx, fmt.Sprintf(`document.querySelector(%q + " input.reason").value = %q`, sel, reason))
	clickIn(t, ctx, sel, yes)
}

// fieldError waits for the error shown next to the reason field in sel
// to contain want.
func fieldError(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	waitFor(t, "error "+want, 10*time.Second, func() string {
		if got := js[string](t, ctx, fmt.Sprintf(`document.querySelector(%q + " .field-error")?.textContent ?? ""`, sel)); !strings.Contains(got, want) {
			return fmt.Sprintf("error %q", got)
		}
		return ""
	})
}

// TestConsoleDisputes: a disqualification in the console takes the member
// out of the API's standings and passes the prizes down; its reason, even
// one that looks like markup, is text in the audit next to the acting
// token's sub; an empty reason is refused next to the field; reinstating
// brings the member back; settling shows the board settled with no action
// left, and the API refuses every amendment after it.
func TestConsoleDisputes(t *testing.T) {
	g := startGateway(t)
	endedCup(g, "cup")
	ctx := openConsole(t, g)
	openBoardInConsole(t, ctx, "cup")
	awaitStandings(t, g, ctx, "cup", "r0 settled=false p1:1:€100 p2:2:€50 p3:3:€25 p4:4:", "p1,p2,p3,p4")

	clickIn(t, ctx, `#standing-rows tr[data-member="p1"]`, "Disqualify")
	answerReason(t, ctx, `#standing-rows tr[data-member="p1"]`, xssReason, "Yes, disqualify")
	awaitStandings(t, g, ctx, "cup", "r1 settled=false p2:1:€100 p3:2:€50 p4:3:€25", "p2,p3,p4")
	if got := js[string](t, ctx, `document.getElementById("revision").textContent`); got != "revision 1" {
		t.Errorf("revision shown %q", got)
	}

	// Reinstating with no reason: the API's 400 naming reason, at the field.
	clickIn(t, ctx, `#dq-rows li[data-member="p1"]`, "Reinstate")
	answerReason(t, ctx, `#dq-rows li[data-member="p1"]`, "", "Yes, reinstate")
	fieldError(t, ctx, `#dq-rows li[data-member="p1"]`, "reason: ")
	answerReason(t, ctx, `#dq-rows li[data-member="p1"]`, "appeal upheld", "Yes, reinstate")
	awaitStandings(t, g, ctx, "cup", "r2 settled=false p1:1:€100 p2:2:€50 p3:3:€25 p4:4:", "p1,p2,p3,p4")

	clickIn(t, ctx, "#settle-slot", "Settle")
	answerReason(t, ctx, "#settle-slot", "paid, batch 77", "Yes, settle")
	awaitStandings(t, g, ctx, "cup", "r2 settled=true p1:1:€100 p2:2:€50 p3:3:€25 p4:4:", "p1,p2,p3,p4")
	waitFor(t, "the page settled", 10*time.Second, func() string {
		s := js[string](t, ctx, `document.getElementById("standings-state").textContent + "|" + document.querySelectorAll("#standings button").length`)
		if !strings.HasPrefix(s, "Settled") || !strings.HasSuffix(s, "|0") {
			return s
		}
		return ""
	})
	for _, path := range []string{"disqualify", "reinstate", "settle"} {
		code, body := g.status("POST", "/v1/boards/cup/"+path, `{"member":"p2","reason":"late"}`)
		if path == "settle" {
			code, body = g.status("POST", "/v1/boards/cup/settle", `{"reason":"again"}`)
		}
		if code != 409 || !strings.Contains(body, "settled: ") {
			t.Errorf("%s after settling: %d %s", path, code, body)
		}
	}

	checkAudit(t, g, ctx)
}

// checkAudit: the audit, as the API answers it and as the console lists it,
// holds the three actions with their reasons and the console's sub ("ops");
// the markup-like reason is text and ran nothing.
func checkAudit(t *testing.T, g *gateway, ctx context.Context) {
	t.Helper()
	var audit struct {
		Actions []struct{ Action, Member, Sub, Reason string } `json:"actions"`
	}
	g.call("GET", "/v1/audit?board=cup", "", &audit)
	raw, _ := json.Marshal(audit.Actions)
	want := `[{"Action":"disqualify","Member":"p1","Sub":"ops","Reason":` + jsonString(xssReason) + `},` +
		`{"Action":"reinstate","Member":"p1","Sub":"ops","Reason":"appeal upheld"},{"Action":"settle","Member":"","Sub":"ops","Reason":"paid, batch 77"}]`
	if string(raw) != want {
		t.Errorf("API audit %s\nwant %s", raw, want)
	}
	wantShown := "ops|disqualify|p1|" + xssReason + "|1\nops|reinstate|p1|appeal upheld|2\nops|settle||paid, batch 77|2"
	waitFor(t, "the audit listed", 10*time.Second, func() string {
		got := js[string](t, ctx, `[...document.querySelectorAll("#audit-rows tr")].map((r) => [...r.cells].slice(1).map((c) => c.textContent).join("|")).join("\n")`)
		if got != wantShown {
			return fmt.Sprintf("shown %q", got)
		}
		return ""
	})
	if s := js[string](t, ctx, `[...document.querySelectorAll("#audit-rows time")].map((e) => e.title.startsWith("UTC 20") ? "" : e.title).join("") + document.querySelectorAll("#audit-rows time").length`); s != "3" {
		t.Errorf("audit times: %q, want 3 with a UTC title", s)
	}
	if js[bool](t, ctx, `!!document.querySelector("#board img") || window.pwned === 1`) {
		t.Error("the reason rendered as markup")
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestConsoleDisputeAfterSettled: an amendment made in a console page that
// still shows the board unsettled, after another operator settled it,
// shows the API's 409 naming settled next to its reason field; reopening
// the board shows it settled with no action.
func TestConsoleDisputeAfterSettled(t *testing.T) {
	g := startGateway(t)
	endedCup(g, "cup")
	ctx := openConsole(t, g)
	openBoardInConsole(t, ctx, "cup")
	row := `#standing-rows tr[data-member="p2"]`
	clickIn(t, ctx, row, "Disqualify")
	g.call("POST", "/v1/boards/cup/settle", `{"reason":"paid elsewhere"}`, nil)
	answerReason(t, ctx, row, "too late", "Yes, disqualify")
	fieldError(t, ctx, row, "settled: ")
	if got := standingsTable(t, g, "cup"); got != "r0 settled=true p1:1:€100 p2:2:€50 p3:3:€25 p4:4:" {
		t.Errorf("standings %q", got)
	}
	openBoardInConsole(t, ctx, "cup")
	waitFor(t, "the page settled", 10*time.Second, func() string {
		s := js[string](t, ctx, `document.getElementById("standings-state").textContent + "|" + document.querySelectorAll("#standings button").length`)
		if !strings.HasPrefix(s, "Settled") || !strings.HasSuffix(s, "|0") {
			return s
		}
		return ""
	})
}

// TestConsoleHeldPrize: a member whose submission is in quarantine keeps
// rank and prize, marked "prize held: under review" in the standings; an
// approval in the console clears the mark.
func TestConsoleHeldPrize(t *testing.T) {
	g := startGateway(t)
	g.call("PUT", "/v1/boards/cup", `{"rules":{"max_step":1000},`+cupPrizes+`}`, nil)
	g.call("POST", "/v1/boards/cup/scores", `{"scores":[{"member":"p1","score":500},{"member":"p2","score":400}]}`, nil)
	g.call("POST", "/v1/boards/cup/scores", `{"member":"p2","score":5000}`, nil)
	qids := held(t, g, "cup")
	if len(qids) != 1 {
		t.Fatalf("held %v, want p2's", qids)
	}
	ctx := openConsole(t, g)
	openBoardInConsole(t, ctx, "cup")
	prizes := func(want string) {
		t.Helper()
		waitFor(t, "prizes "+want, 10*time.Second, func() string {
			got := js[string](t, ctx, `[...document.querySelectorAll("#standing-rows tr")].map((r) => r.dataset.member + ":" + r.cells[4].textContent).join(" ")`)
			if got != want {
				return fmt.Sprintf("shown %q", got)
			}
			return ""
		})
	}
	prizes("p1:€100 p2:€50 prize held: under review")
	decideInConsole(t, ctx, qids["p2"], "approve", "")
	prizes("p2:€100 p1:€50")
}

// TestConsoleVoid: voiding a submission in the console, by the seq its
// result carried, gives the member the entry their other submissions make
// (the API's standings and the console's rows agree, the prizes move); a
// seq the board does not know is the API's 404 naming seq, next to the
// reason field; the audit lists the void with its seq.
func TestConsoleVoid(t *testing.T) {
	g := startGateway(t)
	g.call("PUT", "/v1/boards/cup", `{`+cupPrizes+`}`, nil)
	g.call("POST", "/v1/boards/cup/scores", `{"scores":[{"member":"p1","score":400},{"member":"p2","score":300},{"member":"p3","score":200},{"member":"p4","score":100}]}`, nil)
	var res struct {
		Results []struct {
			Seq int `json:"seq"`
		} `json:"results"`
	}
	g.call("POST", "/v1/boards/cup/scores", `{"member":"p4","score":900}`, &res)
	if len(res.Results) != 1 || res.Results[0].Seq != 5 {
		t.Fatalf("p4's result: %+v", res)
	}
	ctx := openConsole(t, g)
	openBoardInConsole(t, ctx, "cup")
	awaitStandings(t, g, ctx, "cup", "r0 settled=false p4:1:€100 p1:2:€50 p2:3:€25 p3:4:", "p4,p1,p2,p3")

	voidSeq := func(seq, reason string) {
		t.Helper()
		run(t, ctx, fmt.Sprintf(`document.querySelector("#void-slot input.seq").value = %q`, seq))
		clickIn(t, ctx, "#void-slot", "Void")
		answerReason(t, ctx, "#void-slot", reason, "Yes, void")
	}
	voidSeq("99", "no such")
	fieldError(t, ctx, "#void-slot", "seq: 99")
	clickIn(t, ctx, "#void-slot", "Cancel")
	voidSeq("5", "replayed packet")
	awaitStandings(t, g, ctx, "cup", "r1 settled=false p1:1:€100 p2:2:€50 p3:3:€25 p4:4:", "p1,p2,p3,p4")
	waitFor(t, "the void in the audit", 10*time.Second, func() string {
		got := js[string](t, ctx, `[...document.querySelectorAll("#audit-rows tr")].map((r) => [...r.cells].slice(1).map((c) => c.textContent).join("|")).join("\n")`)
		if got != "ops|void seq 5|p4|replayed packet|1" {
			return fmt.Sprintf("shown %q", got)
		}
		return ""
	})
}
