package api

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/auth"
)

// liveViews are the views the equivalence test watches, each with the HTTP
// read that answers the same view.
var liveViews = []struct {
	id   string
	view map[string]any
	read string
}{
	{"top", map[string]any{"kind": "top", "limit": 5, "offset": 2}, "/top?limit=5&offset=2"},
	{"around", map[string]any{"kind": "around", "member": "p3", "radius": 2}, "/members/p3/around?radius=2"},
	{"mine", map[string]any{"kind": "around", "radius": 1}, "/members/p1/around?radius=1"},
	{"rank", map[string]any{"kind": "rank", "rank": 4}, "/ranks/4"},
	{"friends", map[string]any{"kind": "members", "members": []string{"p1", "p5", "p9", "nobody"}}, "/members?ids=p1,p5,p9,nobody"},
}

// TestWSViewsMatchHTTP: under every policy, a client that applies
// snapshots and diffs holds exactly what the HTTP read of the same view
// answers, after each round of random submissions and removals.
func TestWSViewsMatchHTTP(t *testing.T) {
	e := newLiveEnv(t, Config{})
	adm := e.token("a", admin)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for _, policy := range []string{"best", "latest", "sum", "first"} {
		board := "b-" + policy
		e.must(200, "PUT", "/v1/boards/"+board, adm, `{"policy":"`+policy+`","rules":{"max_score":1000}}`)
		c := e.dial("access_token="+e.tokenFor("a", auth.RoleRead, "p1", time.Now().Add(time.Hour)), true, nil)
		for _, v := range liveViews {
			c.Subscribe(v.id, board, v.view)
		}
		for round := range 4 {
			submitRandom(e, r, board, adm)
			for _, v := range liveViews {
				checkFor(t, 5*time.Second, func() error { return sameAsHTTP(e, c, board, v.id, v.read, adm) })
			}
			t.Logf("%s round %d: %d views agree", policy, round, len(liveViews))
		}
	}
}

func submitRandom(e *liveEnv, r *rand.Rand, board, tok string) {
	var items []string
	for range 1 + r.IntN(20) {
		items = append(items, fmt.Sprintf(`{"member":"p%d","score":%d,"subscore":%d}`, r.IntN(15), r.IntN(40), r.IntN(3)))
	}
	e.must(200, "POST", "/v1/boards/"+board+"/scores", tok, `{"scores":[`+strings.Join(items, ",")+`]}`)
	if r.IntN(2) == 0 {
		e.do("DELETE", fmt.Sprintf("/v1/boards/%s/members/p%d", board, r.IntN(15)), tok, "")
	}
	if r.IntN(3) == 0 { // a held submission marks the member's rows as under review
		e.must(200, "POST", "/v1/boards/"+board+"/scores", tok, fmt.Sprintf(`{"member":"p%d","score":5000}`, r.IntN(15)))
	}
	if r.IntN(3) == 0 { // a decision may clear the marker
		held := e.must(200, "GET", "/v1/boards/"+board+"/quarantine", tok, "")["rows"].([]any)
		if len(held) > 0 {
			qid := held[r.IntN(len(held))].(map[string]any)["qid"].(string)
			e.must(200, "POST", "/v1/boards/"+board+"/quarantine/"+qid+"/"+[]string{"approve", "reject"}[r.IntN(2)], tok, "")
		}
	}
	if r.IntN(2) == 0 { // a profile change is a change of every view showing the member
		e.must(200, "PUT", fmt.Sprintf("/v1/members/p%d/profile", r.IntN(15)), tok,
			fmt.Sprintf(`{"name":"Player %d","country":"%s"}`, r.IntN(1000), []string{"MT", "GB", "DE"}[r.IntN(3)]))
	}
}

// sameAsHTTP compares a subscription's state with the HTTP read; a 404
// (no such member or rank) reads as no rows.
func sameAsHTTP(e *liveEnv, c *wsClient, board, id, read, tok string) error {
	status, out := e.do("GET", "/v1/boards/"+board+read, tok, "")
	want := map[int]rowJSON{}
	if status == http.StatusOK {
		want = asRows(out)
	}
	got, ok := c.Rows(id)
	if !ok || !maps.Equal(got, want) {
		return fmt.Errorf("%s: client holds %v, HTTP %s reads %v", id, got, read, want)
	}
	return nil
}

// TestWSResume: a client that reconnects with since gets a diff whose prev
// is since, and its old state plus that diff is the view.
func TestWSResume(t *testing.T) {
	e := newLiveEnv(t, Config{})
	adm := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/weekly", adm, `{}`)
	e.must(200, "POST", "/v1/boards/weekly/scores", adm, `{"scores":[{"member":"p1","score":10},{"member":"p2","score":20}]}`)
	tok := "access_token=" + e.token("a", auth.RoleRead)
	c := e.dial(tok, true, nil)
	view := map[string]any{"kind": "top", "limit": 3}
	c.Subscribe("s1", "weekly", view)
	checkFor(t, 5*time.Second, func() error { return sameAsHTTP(e, c, "weekly", "s1", "/top?limit=3", adm) })
	e.must(200, "POST", "/v1/boards/weekly/scores", adm, `{"member":"p3","score":15}`)
	checkFor(t, 5*time.Second, func() error { return sameAsHTTP(e, c, "weekly", "s1", "/top?limit=3", adm) })
	old, _ := c.Rows("s1")
	since := c.LastSeq("s1")
	c.Conn().Close(websocket.StatusNormalClosure, "")

	e.must(200, "POST", "/v1/boards/weekly/scores", adm, `{"scores":[{"member":"p4","score":30},{"member":"p1","score":1}]}`)
	c2 := e.dial(tok, false, nil)
	c2.Send(map[string]any{"type": "subscribe", "id": "s1", "board": "weekly", "view": view, "since": since})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, data, err := c2.Conn().Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), `{"type":"diff","id":"s1",`) || !strings.Contains(string(data), fmt.Sprintf(`"prev":%d`, since)) {
		t.Fatalf("resume answered %s, want a diff with prev %d", data, since)
	}
	c2.Seed("s1", old, since)
	c2.Apply(data)
	// The resume diff brings the view to some seq after since; changes the
	// feed had not ticked out yet arrive in the next diffs of the chain.
	for sameAsHTTP(e, c2, "weekly", "s1", "/top?limit=3", adm) != nil {
		_, data, err := c2.Conn().Read(ctx)
		if err != nil {
			t.Fatalf("resumed view never matched HTTP: %v", sameAsHTTP(e, c2, "weekly", "s1", "/top?limit=3", adm))
		}
		c2.Apply(data)
	}
	if err := c2.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestSecondServerLeavesFeed: a second Server over the same hub (a test
// harness, an admin listener) does not take the hub's change feed from
// the first, whose owner wired it: New takes no feed, so the first
// Server's live views keep streaming.
func TestSecondServerLeavesFeed(t *testing.T) {
	e := newLiveEnv(t, Config{})
	adm := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/weekly", adm, `{}`)
	c := e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
	c.Subscribe("s1", "weekly", map[string]any{"kind": "top", "limit": 3})
	checkFor(t, 5*time.Second, func() error { return sameAsHTTP(e, c, "weekly", "s1", "/top?limit=3", adm) })

	second := New(Config{Hub: e.hub, Verifier: auth.NewVerifier(e.keys, auth.Options{}), Keys: e.keys})
	t.Cleanup(func() { second.CloseWebSockets(context.Background()) })
	e.must(200, "POST", "/v1/boards/weekly/scores", adm, `{"member":"p9","score":90}`)
	checkFor(t, 5*time.Second, func() error {
		if rows, _ := c.Rows("s1"); rows[1].Member != "p9" {
			return fmt.Errorf("the first server's view holds %v, want p9 first: its feed was taken", rows)
		}
		return nil
	})
}
