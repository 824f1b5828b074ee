package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/notify"
)

// TestEraseOnThreeNodes: a profile (name, avatar URL) and an e-mail
// alias set through one node of a 3-node cluster, the alias used to submit
// and to remove a member through the others, a standings.amended
// notification naming the member: until the first snapshot no byte of any
// node's data directory holds the personal data, Raft logs included
// (sealed, or logged as the member's id). Snapshotted by every node (a
// restart) and erased through another node: every node's reads and export
// show none of it, before and after a restart of the whole cluster, and no
// byte of any node's data directory (its JetStream streams and Raft logs,
// its snapshots) holds the name, the avatar URL or the alias.
func TestEraseOnThreeNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes, restarted twice")
	}
	c := startCluster(t, 3)
	nodes, tok := c.nodes, c.tok
	secret := []string{"Qzxv Erasable", "https://avatars.qzxv.example/p1.png", "email:qzxv@mail.example"}
	for _, r := range []struct {
		node               int
		method, path, body string
	}{
		{0, "PUT", "/v1/boards/b", `{}`},
		{0, "PUT", "/v1/boards/c", `{}`},
		{0, "POST", "/v1/boards/b/scores", `{"scores":[{"member":"p1","score":10},{"member":"p2","score":5}]}`},
		{1, "POST", "/v1/identities", `{"member":"p1","aliases":["` + secret[2] + `"]}`},
		{1, "PUT", "/v1/members/p1/profile", `{"name":"` + secret[0] + `","avatar":"` + secret[1] + `"}`},
		// By the alias, once the node resolves it: logged as p1.
		{0, "GET", "/v1/identities/" + secret[2], ``},
		{0, "POST", "/v1/boards/b/scores", `{"member":"` + secret[2] + `","score":12}`},
		{2, "GET", "/v1/identities/" + secret[2], ``},
		{2, "POST", "/v1/boards/c/scores", `{"member":"` + secret[2] + `","score":1}`},
		{2, "DELETE", "/v1/boards/c/members/" + secret[2], ``},
		// A standings.amended notification naming p1 (stored sealed).
		{1, "POST", "/v1/boards/b/disqualify", `{"member":"p2","reason":"ticket 1"}`},
	} {
		await.For(t, 30*time.Second, func() error { // node 2 serves the tenant once it discovered its stream
			if status, err := call(r.method, nodes[r.node].p.url(r.path), tok, r.body, nil); status != 200 {
				return fmt.Errorf("%s %s: %d %v", r.method, r.path, status, err)
			}
			return nil
		})
	}
	amended := storedNotification(t, c, "standings.amended")
	if strings.Contains(amended, secret[0]) || !strings.Contains(amended, `"sealed":`) {
		t.Fatalf("the notification naming p1 is stored as %s", amended)
	}
	// By construction, before any snapshot: the streams and their Raft
	// logs (which erasure cannot rewrite) hold the notification and the
	// events, but none of the personal data in clear.
	if got := dirsHolding(t, c, `"type":"standings.amended"`); !anyIn(got, "_js_") {
		t.Fatalf("no Raft log holds the notification in clear: the search proves nothing\n%s", strings.Join(got, "\n"))
	}
	if got := dirsHolding(t, c, secret...); len(got) > 0 {
		t.Fatalf("the streams hold personal data in clear:\n%s", strings.Join(got, "\n"))
	}
	restartAll(t, c) // every node's snapshot, and the shared one, hold the data now
	if got := dirsHolding(t, c, secret[0]); len(got) == 0 {
		t.Fatal("no file holds the profile before the erasure: the search proves nothing")
	}
	await.For(t, 30*time.Second, func() error {
		if status, err := call("DELETE", nodes[2].p.url("/v1/members/"+secret[2]+"/personal-data"), tok, "", nil); status != 200 {
			return fmt.Errorf("erase: %d %v", status, err)
		}
		return nil
	})
	for _, n := range nodes {
		await.For(t, 30*time.Second, func() error { return erasedOn(n, tok, secret) })
	}
	if got := dirsHolding(t, c, secret...); len(got) > 0 { // the shared snapshots' Raft log until compacted: docs/SECURITY.md
		t.Logf("after the erasure, before a restart:\n%s", strings.Join(got, "\n"))
	}
	restartAll(t, c)
	for _, n := range nodes {
		if err := erasedOn(n, tok, secret); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range nodes {
		stop(t, n.p)
	}
	if got := dirsHolding(t, c, secret...); len(got) > 0 {
		t.Fatalf("erased personal data on disk:\n%s", strings.Join(got, "\n"))
	}
}

// anyIn reports whether one of dirsHolding's findings is under a
// directory named dir.
func anyIn(found []string, dir string) bool {
	for _, f := range found {
		if strings.Contains(f, string(filepath.Separator)+dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// erasedOn reports how node n still shows the erased data, if it does.
func erasedOn(n *clusterNode, tok string, secret []string) error {
	if status, _ := call("GET", n.p.url("/v1/members/p1/profile"), tok, "", nil); status != 404 {
		return fmt.Errorf("%s: the profile answers %d", n.p.addr, status)
	}
	if status, _ := call("GET", n.p.url("/v1/identities/"+secret[2]), tok, "", nil); status != 404 {
		return fmt.Errorf("%s: the alias answers %d", n.p.addr, status)
	}
	var export map[string]any
	if status, err := call("GET", n.p.url("/v1/members/p1/personal-data"), tok, "", &export); status != 200 {
		return fmt.Errorf("%s: export: %d %v", n.p.addr, status, err)
	}
	if s := fmt.Sprint(export); export["profile"] != nil || strings.Contains(s, "qzxv") || !strings.Contains(s, "score:12") {
		return fmt.Errorf("%s: export %s", n.p.addr, s)
	}
	var row map[string]any
	if status, _ := call("GET", n.p.url("/v1/boards/b/members/p1"), tok, "", &row); status != 200 || row["name"] != nil {
		return fmt.Errorf("%s: p1's row %v", n.p.addr, row)
	}
	return nil
}

// restartAll stops every node (each writes its snapshot) and starts them
// again, waiting until all are ready.
func restartAll(t *testing.T, c *cluster) {
	t.Helper()
	for _, n := range c.nodes {
		stop(t, n.p)
	}
	addrs := make([]chan string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.launch(t)
	}
	for i, n := range c.nodes {
		n.wait(t, addrs[i])
	}
}

// dirsHolding returns, for each node's data directory, the files that
// hold one of needles.
func dirsHolding(t *testing.T, c *cluster, needles ...string) []string {
	t.Helper()
	var out []string
	for _, n := range c.nodes {
		var dir string
		for _, e := range n.env {
			if d, ok := strings.CutPrefix(e, "RANKWIRE_DATA="); ok {
				dir = d
			}
		}
		if dir == "" {
			t.Fatal("a node without RANKWIRE_DATA")
		}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			for _, s := range needles {
				if bytes.Contains(data, []byte(s)) {
					out = append(out, fmt.Sprintf("%s holds %q", p, s))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// storedNotification returns the body of the first of t1's notifications
// of type typ stored in the notifications' stream, as stored.
func storedNotification(t *testing.T, c *cluster, typ string) string {
	t.Helper()
	js, done := c.jetStream(t, c.nodes[0])
	defer done()
	var body string
	await.For(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := js.Stream(ctx, notify.Stream)
		if err != nil {
			return err
		}
		for seq := uint64(1); ; {
			m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(notify.Subject("t1")))
			if err != nil {
				return fmt.Errorf("no %s notification stored: %w", typ, err)
			}
			if strings.Contains(string(m.Data), `"type":"`+typ+`"`) {
				body = string(m.Data)
				return nil
			}
			seq = m.Sequence + 1
		}
	})
	return body
}
