package web_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// longName is member pN's profile name: 20 characters, of a person's
// name's widths (capitals, a space, lower case, digits).
func longName(n int) string { return fmt.Sprintf("Konstantin Wolfsb%03d", n) }

// phoneBoards sets up, on g, the boards a phone lobby shows: "slots" with
// members p1..p30 and "cup", a tournament with prizes and members
// p1..p12; every member has a 20-character profile name. "deep" has 12,000
// members, for ranks of five digits.
func phoneBoards(t *testing.T, g *gateway) {
	t.Helper()
	board(g, "slots", 30)
	g.call("PUT", "/v1/boards/deep", `{}`, nil)
	for batch := range 12 {
		var items []string
		for i := batch*1000 + 1; i <= (batch+1)*1000; i++ {
			items = append(items, fmt.Sprintf(`{"member":"d%d","score":%d}`, i, i))
		}
		g.call("POST", "/v1/boards/deep/scores", `{"scores":[`+strings.Join(items, ",")+`]}`, nil)
	}
	g.call("PUT", "/v1/boards/cup", `{"prizes":[{"from":1,"to":1,"prize":"€1,000"},{"from":2,"to":10,"prize":"€250 + 50 spins"}]}`, nil)
	var items []string
	for i := 1; i <= 12; i++ {
		items = append(items, fmt.Sprintf(`{"member":"p%d","score":%d}`, i, i*1000))
	}
	g.call("POST", "/v1/boards/cup/scores", `{"scores":[`+strings.Join(items, ",")+`]}`, nil)
	for i := 1; i <= 30; i++ {
		g.call("PUT", fmt.Sprintf("/v1/members/p%d/profile", i), fmt.Sprintf(`{"name":%q}`, longName(i)), nil)
	}
}

// phoneLayouts are the widget's layouts in a lobby: id → attributes.
var phoneLayouts = map[string]map[string]string{
	"top":     {"board": "slots", "limit": "10"},
	"around":  {"board": "slots", "view": "around", "radius": "3"},
	"rank":    {"board": "slots", "view": "rank", "rank": "5"},
	"friends": {"board": "slots", "view": "members", "members": "p1,p2,p3,p29"},
	"prize":   {"board": "cup", "limit": "10"},
	"deep":    {"board": "deep", "limit": "5", "offset": "11990"},
}

// cellFit is how one row's cells fit: the player cell's width, how many
// of the name's characters show, and whether the score and the prize show
// whole.
type cellFit struct {
	Member     string  `json:"member"`
	RankWhole  bool    `json:"rankWhole"`
	CellWidth  float64 `json:"cellWidth"`
	Chars      int     `json:"chars"`     // the name's length
	NameShown  float64 `json:"nameShown"` // characters visible: all of them, or the share the ellipsis leaves
	ScoreWhole bool    `json:"scoreWhole"`
	Prize      string  `json:"prize"` // the prize text where it shows (its column or under the name), whole
	PrizeWhole bool    `json:"prizeWhole"`
}

// measureFit reads every row of board id as the phone shows it.
const measureFit = `((id) => [...document.getElementById(id).shadowRoot.querySelectorAll("tbody tr")].map((tr) => {
  const th = tr.querySelector("th"), name = th.querySelector(".name"), score = tr.children[2];
  const shownPrize = [tr.querySelector("td.prize"), th.querySelector(".prize-under")].find((el) => el.offsetParent !== null && el.textContent);
  const chars = name.textContent.length;
  return {
    member: th.title,
    chars,
    rankWhole: tr.children[0].scrollWidth <= tr.children[0].clientWidth,
    cellWidth: th.getBoundingClientRect().width,
    nameShown: name.scrollWidth <= name.clientWidth ? chars : chars * name.clientWidth / name.scrollWidth,
    scoreWhole: score.scrollWidth <= score.clientWidth,
    prize: shownPrize ? shownPrize.textContent : "",
    prizeWhole: !shownPrize || shownPrize.scrollWidth <= shownPrize.clientWidth,
  };
}))`

// TestBoardOnPhones: at 360 and 390 px, in a lobby with 20 px gutters, every
// layout (top, around, rank, friends, a tournament's prize board) shows a
// 20-character name in a cell at least 140 px wide with at least 12 of its
// characters, the rank (five digits, in "deep") and the score whole, and
// the prize whole (under the name: the prize column gives way).
func TestBoardOnPhones(t *testing.T) {
	g := startGateway(t)
	phoneBoards(t, g)
	for _, width := range []int{360, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			ctx := phonePage(t, g, width)
			for id, attrs := range phoneLayouts {
				mount(t, ctx, id, withAttrs(attrs, map[string]string{"token": readToken(g, "p20"), "locale": "en-US"}))
			}
			for id := range phoneLayouts {
				checkFit(t, ctx, id, width)
			}
		})
	}
}

// checkFit waits until board id is live and checks how its rows fit.
func checkFit(t *testing.T, ctx context.Context, id string, width int) {
	t.Helper()
	var rows []cellFit
	waitFor(t, id+" live with its rows", 10*time.Second, func() string {
		s := look(t, ctx, id)
		if s.State != "live" || len(s.Rows) == 0 {
			return fmt.Sprintf("%+v", s)
		}
		rows = js[[]cellFit](t, ctx, fmt.Sprintf("%s(%q)", measureFit, id))
		return ""
	})
	prizes, tightest := 0, rows[0]
	for _, r := range rows {
		if r.NameShown < tightest.NameShown {
			tightest = r
		}
		if r.CellWidth < 140 || r.NameShown < float64(min(12, r.Chars)) || !r.RankWhole || !r.ScoreWhole || !r.PrizeWhole {
			t.Errorf("%s at %d px: row %s: player cell %.0f px (want ≥ 140), %.1f name characters shown (want ≥ 12), rank whole %v, score whole %v, prize %q whole %v",
				id, width, r.Member, r.CellWidth, r.NameShown, r.RankWhole, r.ScoreWhole, r.Prize, r.PrizeWhole)
		}
		if r.Prize != "" {
			prizes++
		}
	}
	if id == "prize" && prizes != 10 {
		t.Errorf("prize board at %d px shows %d prizes, want 10 (ranks 1..10 win one)", width, prizes)
	}
	t.Logf("%s at %d px: %d rows, the tightest %+v", id, width, len(rows), tightest)
}

// phonePage opens the test page on a phone width px wide, its body laid
// out as a phone lobby: no margin, 20 px gutters.
func phonePage(t *testing.T, g *gateway, width int) context.Context {
	t.Helper()
	ctx := openPage(t, g, phone(t, width, 800))
	js[bool](t, ctx, `(document.body.style.cssText = "margin: 0; padding: 0 20px", true)`)
	return ctx
}

func withAttrs(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// sampleRows starts, in the page, a requestAnimationFrame loop over board
// id that checks every frame: the ranks shown top to bottom are first..
// first+n-1, each once, and no two rows' boxes (transforms included)
// overlap. stopSampling returns what it saw.
const sampleRows = `((id, n, first) => {
  const root = document.getElementById(id).shadowRoot;
  const s = window.sampling = { frames: 0, problems: [], run: true };
  const frame = () => {
    if (!s.run) return;
    s.frames++;
    const rows = [...root.querySelectorAll("tbody tr")].map((tr) => {
      const r = tr.getBoundingClientRect();
      return { rank: Number(tr.querySelector(".pos").textContent.replace(/[^\d]/g, "")), top: r.top, bottom: r.bottom };
    }).sort((a, b) => a.top - b.top);
    const ranks = rows.map((r) => r.rank);
    const want = Array.from({ length: n }, (_, i) => first + i);
    if (ranks.join() !== want.join()) s.problems.push("frame " + s.frames + ": ranks top to bottom " + ranks.join());
    for (let i = 1; i < rows.length; i++) {
      if (rows[i].top < rows[i - 1].bottom - 0.5) s.problems.push("frame " + s.frames + ": rank " + rows[i].rank + " overlaps rank " + rows[i - 1].rank + " by " + (rows[i - 1].bottom - rows[i].top).toFixed(1) + " px");
    }
    if (s.problems.length > 20) s.problems.length = 20;
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  return true;
})`

// TestBoardRowsNeverOverlap: while a top-10 board takes a stream of rank
// changes (each while the last one's animation still runs), every frame
// shows ranks 1..10 top to bottom, each once, and no row over another: a
// screenshot at any moment is a whole table.
func TestBoardRowsNeverOverlap(t *testing.T) {
	g := startGateway(t)
	board(g, "slots", 30)
	ctx := page(t, g)
	mount(t, ctx, "top", map[string]string{"board": "slots", "token": readToken(g, "p1"), "limit": "10", "locale": "en-US"})
	waitFor(t, "live", 10*time.Second, func() string { return sameRows(look(t, ctx, "top").Rows, g.rows("/v1/boards/slots/top?limit=10")) })
	js[bool](t, ctx, sampleRows+`("top", 10, 1)`)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	moves := 0
	for round := range 25 {
		// Three members jump into or within the top 10: rows pass each other.
		var items []string
		for range 3 {
			items = append(items, fmt.Sprintf(`{"member":"p%d","score":%d}`, 1+rng.IntN(30), 200+rng.IntN(400)))
		}
		g.call("POST", "/v1/boards/slots/scores", `{"scores":[`+strings.Join(items, ",")+`]}`, nil)
		waitFor(t, fmt.Sprintf("round %d shown", round), 10*time.Second, func() string {
			return sameRows(look(t, ctx, "top").Rows, g.rows("/v1/boards/slots/top?limit=10"))
		})
		moves += js[int](t, ctx, `document.getElementById("top").shadowRoot.querySelectorAll("tr.moved-up").length`)
	}
	res := js[struct {
		Frames   int
		Problems []string
	}](t, ctx, `(window.sampling.run = false, window.sampling)`)
	for _, p := range res.Problems {
		t.Error(p)
	}
	if res.Frames < 30 || moves < 10 {
		t.Fatalf("%d frames sampled and %d row moves shown: too few to tell", res.Frames, moves)
	}
	t.Logf("%d frames sampled, %d row moves shown, no rank missing or doubled, no overlap", res.Frames, moves)
}
