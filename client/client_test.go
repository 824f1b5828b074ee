package client_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/client"
	"github.com/rankwire/rankwire/internal/gwtest"
	"github.com/rankwire/rankwire/internal/live"
)

// gateway is a real gateway in-process (internal/gwtest) with the keys of
// tenants t1 (kid k1) and t2 (kid k2).
type gateway struct {
	*gwtest.Gateway
	t    *testing.T
	keys *auth.Keyring
}

func startGateway(t *testing.T) *gateway { return startGatewayOn(t, "") }

// startGatewayOn starts a gateway on the NATS server at natsURL (empty: an
// embedded one of its own).
func startGatewayOn(t *testing.T, natsURL string) *gateway {
	t.Helper()
	return startGatewayWith(t, natsURL, live.Options{})
}

// startGatewayWith is startGatewayOn with the live plane's options o.
func startGatewayWith(t *testing.T, natsURL string, o live.Options) *gateway {
	t.Helper()
	secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{'c'}, 32))
	keys, err := auth.ParseKeys(fmt.Appendf(nil, `{"tenants":{"t1":{"keys":[{"kid":"k1","alg":"HS256","secret":%q}]},
		"t2":{"keys":[{"kid":"k2","alg":"HS256","secret":%q}]}}}`, secret, base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{'d'}, 32))))
	if err != nil {
		t.Fatal(err)
	}
	return &gateway{Gateway: gwtest.Start(t, gwtest.Options{Keys: keys, PushInterval: 10 * time.Millisecond, NATSURL: natsURL, Live: o}), t: t, keys: keys}
}

func (g *gateway) token(tenant, kid string, roles auth.Role) string {
	key, _ := g.keys.SigningKey(kid)
	tok, err := auth.Mint(key, auth.Claims{Tenant: tenant, Subject: "p1", Roles: roles, Expiry: time.Now().Add(time.Hour)})
	if err != nil {
		g.t.Fatal(err)
	}
	return tok
}

func (g *gateway) client(t *testing.T, tenant, kid string, roles auth.Role) *client.Client {
	c, err := client.New([]string{g.URL()}, client.WithToken(g.token(tenant, kid, roles)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The typed calls against a real gateway: boards, submissions with ids,
// reads with cursors and ranges, standings, quarantine, profiles,
// identities; errors as *client.Error with the protocol's code.
func TestCalls(t *testing.T) {
	g := startGateway(t)
	c := g.client(t, "t1", "k1", auth.RoleAdmin)
	ctx := context.Background()
	max := 1000.0
	b, err := c.PutBoard(ctx, "cup", client.Settings{Policy: "best", Prizes: []client.Prize{{From: 1, To: 1, Prize: "€5"}}, Rules: &client.Rules{MaxScore: &max}})
	if err != nil || b.Name != "cup" || b.Policy != "best" || len(b.Prizes) != 1 {
		t.Fatalf("PutBoard: %+v %v", b, err)
	}
	res, err := c.Submit(ctx, "cup", client.Score{Member: "a", Score: 10, ID: "x"}, client.Score{Member: "b", Score: 20}, client.Score{Member: "c", Score: 5000})
	if err != nil || len(res) != 3 || res[1].Rank != 1 || !res[2].Quarantined || res[2].Reason != "max_score" {
		t.Fatalf("Submit: %+v %v", res, err)
	}
	if again, _ := c.Submit(ctx, "cup", client.Score{Member: "a", Score: 10, ID: "x"}); !again[0].Duplicate {
		t.Fatalf("a repeated id: %+v", again)
	}
	p, err := c.Top(ctx, "cup", client.ReadOptions{Limit: 1})
	if err != nil || len(p.Rows) != 1 || p.Rows[0].Member != "b" || p.Next == "" || p.Total != 2 {
		t.Fatalf("Top: %+v %v", p, err)
	}
	if p, _ = c.Top(ctx, "cup", client.ReadOptions{Limit: 1, After: p.Next}); len(p.Rows) != 1 || p.Rows[0].Member != "a" || p.Next != "" {
		t.Fatalf("Top after the cursor: %+v", p)
	}
	if p, _ := c.Scores(ctx, "cup", 0, 15, client.ReadOptions{}); p.Count == nil || *p.Count != 1 || p.Rows[0].Member != "a" {
		t.Fatalf("Scores: %+v", p)
	}
	if rank, total, _ := c.ScoreRank(ctx, "cup", 15, 0); rank != 2 || total != 2 {
		t.Fatalf("ScoreRank: %d of %d", rank, total)
	}
	if st, _ := c.Standings(ctx, "cup", 0, 10); st.Rows[0].Prize != "€5" || st.Final {
		t.Fatalf("Standings: %+v", st)
	}
	held, next, err := c.Quarantine(ctx, "cup", "", 10)
	if err != nil || len(held) != 1 || next != "" || held[0].Member != "c" {
		t.Fatalf("Quarantine: %+v %q %v", held, next, err)
	}
	if r, err := c.Approve(ctx, "cup", held[0].QID); err != nil || r.Rank != 1 {
		t.Fatalf("Approve: %+v %v", r, err)
	}
	if _, err := c.PutProfile(ctx, "a", client.Profile{Name: "Ace", Country: "mt"}); err != nil {
		t.Fatal(err)
	}
	if row, err := c.Member(ctx, "cup", "a", client.Window{}); err != nil || row.Name != "Ace" || row.Country != "MT" || row.Rank != 3 || row.TopPercent == nil || row.Total != 3 {
		t.Fatalf("Member: %+v %v", row, err)
	}
	if id, err := c.Link(ctx, "a", "email:a@x.io"); err != nil || id.Member != "a" || len(id.Aliases) != 1 {
		t.Fatalf("Link: %+v %v", id, err)
	}
	if around, err := c.Around(ctx, "cup", "email:a@x.io", 1, client.Window{}); err != nil || len(around.Rows) != 2 {
		t.Fatalf("Around by alias: %+v %v", around, err)
	}
	if pd, err := c.PersonalData(ctx, "email:a@x.io"); err != nil || pd.Member != "a" || pd.Profile == nil || pd.Profile.Name != "Ace" || len(pd.Entries) != 1 {
		t.Fatalf("PersonalData: %+v %v", pd, err)
	}

	if boards, next, err := c.Boards(ctx, "", 10); err != nil || len(boards) != 1 || boards[0].Members != 3 || next != "" {
		t.Fatalf("Boards: %+v %q %v", boards, next, err)
	}
	if row, err := c.AtRank(ctx, "cup", 1, client.Window{}); err != nil || row.Member != "c" {
		t.Fatalf("AtRank: %+v %v", row, err)
	}
	if p, err := c.Members(ctx, "cup", []string{"a", "b", "nobody"}, client.Window{}); err != nil || len(p.Rows) != 2 || p.Rows[0].Member != "b" {
		t.Fatalf("Members: %+v %v", p, err)
	}
	if pts, err := c.History(ctx, "cup", "b", ""); err != nil || len(pts) != 1 || pts[0].At == "" {
		t.Fatalf("History: %+v %v", pts, err)
	}
	if id, err := c.Identity(ctx, "email:a@x.io"); err != nil || id.Member != "a" {
		t.Fatalf("Identity: %+v %v", id, err)
	}
	if e, err := c.ErasePersonalData(ctx, "email:a@x.io"); err != nil || e != (client.Erasure{Member: "a", Profile: true, Aliases: 1}) {
		t.Fatalf("ErasePersonalData: %+v %v", e, err)
	}
	var ce *client.Error
	if _, err := c.Profile(ctx, "a"); !errors.As(err, &ce) || ce.Code != "not_found" {
		t.Fatalf("the profile after the erasure: %v", err)
	}
	if tn, err := c.Tenant(ctx); err != nil || tn.Tenant != "t1" || tn.Limits.Boards == 0 {
		t.Fatalf("Tenant: %+v %v", tn, err)
	}
	if err := c.RemoveMember(ctx, "cup", "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Member(ctx, "cup", "b", client.Window{}); !client.IsCode(err, "not_found") {
		t.Fatalf("a removed member: %v", err)
	}
	if err := c.Reset(ctx, "cup"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteBoard(ctx, "cup"); err != nil {
		t.Fatal(err)
	}

	_, err = c.Submit(ctx, "cup", client.Score{Member: "", Score: 1})
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 400 || e.Code != "bad_request" || e.Message == "" {
		t.Fatalf("a bad submission: %v", err)
	}
	if _, err := c.Board(ctx, "nope"); !client.IsCode(err, "not_found") {
		t.Fatalf("an unknown board: %v", err)
	}
	reader := g.client(t, "t1", "k1", auth.RoleRead)
	if _, err := reader.Submit(ctx, "cup", client.Score{Member: "z", Score: 1}); !client.IsCode(err, "forbidden") {
		t.Fatalf("a read token submitting: %v", err)
	}
	if _, err := g.client(t, "t2", "k2", auth.RoleAdmin).Top(ctx, "cup", client.ReadOptions{}); !client.IsCode(err, "not_found") {
		t.Fatalf("another tenant's board: %v", err)
	}
	if _, err := client.New(nil); err == nil {
		t.Fatal("New without URLs")
	}
	if _, err := client.New([]string{"ftp://x"}, client.WithToken("t")); err == nil {
		t.Fatal("New with an ftp URL")
	}
}

// Watch follows a view through a gateway restart: it reconnects, resumes
// with since, and the states it yields follow one another with every
// change, before and after.
func TestWatchAcrossRestart(t *testing.T) {
	g := startGateway(t)
	admin := g.client(t, "t1", "k1", auth.RoleAdmin)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := admin.PutBoard(ctx, "b", client.Settings{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Submit(ctx, "b", client.Score{Member: "a", Score: 1}); err != nil {
		t.Fatal(err)
	}
	reader := g.client(t, "t1", "k1", auth.RoleRead)
	states := make(chan client.ViewState, 100)
	errc := make(chan error, 1)
	go func() {
		for st, err := range reader.Watch(ctx, "b", client.Top(10), client.WatchBackoff(20*time.Millisecond, 200*time.Millisecond)) {
			if err != nil {
				errc <- err
				return
			}
			states <- st
		}
	}()
	wait := func(what string, ok func(client.ViewState) bool) client.ViewState {
		t.Helper()
		for {
			select {
			case st := <-states:
				if ok(st) {
					return st
				}
			case err := <-errc:
				t.Fatalf("%s: watch ended: %v", what, err)
			case <-ctx.Done():
				t.Fatalf("%s: not seen", what)
			}
		}
	}
	first := wait("the first state", func(st client.ViewState) bool { return len(st.Rows) == 1 })
	if _, err := admin.Submit(ctx, "b", client.Score{Member: "b", Score: 2}); err != nil {
		t.Fatal(err)
	}
	wait("b on top", func(st client.ViewState) bool {
		return len(st.Rows) == 2 && st.Rows[0].Member == "b" && st.Seq > first.Seq
	})

	g.Stop()
	g.Start()
	if _, err := admin.Submit(ctx, "b", client.Score{Member: "c", Score: 3}); err != nil {
		t.Fatal(err)
	}
	st := wait("c on top after the restart", func(st client.ViewState) bool { return len(st.Rows) == 3 && st.Rows[0].Member == "c" })
	if st.Total != 3 || st.Rows[2].Member != "a" {
		t.Fatalf("after the restart: %+v", st)
	}

	// A view the gateway refuses ends the watch with its error.
	for _, err := range reader.Watch(ctx, "nope", client.Top(10)) {
		if !client.IsCode(err, "not_found") {
			t.Fatalf("a watch of an unknown board: %v", err)
		}
		break
	}
}

// A gateway that refuses connections is passed over, for reads and writes.
func TestFailover(t *testing.T) {
	g := startGateway(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	c, err := client.New([]string{down, g.URL()}, client.WithToken(g.token("t1", "k1", auth.RoleAdmin)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.PutBoard(ctx, "b", client.Settings{}); err != nil {
		t.Fatalf("a write past a gateway that is down: %v", err)
	}
	if _, err := c.Top(ctx, "b", client.ReadOptions{}); err != nil {
		t.Fatalf("a read: %v", err)
	}
	if st, err := client.Status(nil); st != 200 || err != nil {
		t.Fatalf("Status(nil) = %d %v", st, err)
	}
	_, err = c.Board(ctx, "nope")
	if st, err := client.Status(err); st != 404 || err != nil {
		t.Fatalf("Status of a 404 = %d %v", st, err)
	}
}
