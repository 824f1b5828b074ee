package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/notify"
)

// TestEraseOnThreeNodes: a profile (name, avatar URL) and an e-mail
// alias set through one node of a 3-node cluster, the alias used to submit
// and to remove a member through the others, a standings.amended
// notification naming the member: no byte of any node's data directory
// holds the personal data, Raft logs included (sealed, or logged as the
// member's id), neither before the first snapshot nor after every node
// snapshotted (a restart: the snapshots seal it too, and hold a member id
// in clear, which proves the search). Erased through another node: every
// node's reads and export show none of it, before and after a restart of
// the whole cluster, and no byte of any node's data directory (its
// JetStream streams and Raft logs, their blocks included, its snapshots)
// holds the name, the avatar URL or the alias, at any point. A twin tenant
// with the same member and board names (its own personal data) keeps its
// profile, alias and notification.
func TestEraseOnThreeNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes, restarted twice")
	}
	c := startCluster(t, 3)
	nodes, tok, twinTok := c.nodes, c.tok, twinTenant(t, c)
	secret := []string{"Qzxv Erasable", "https://avatars.qzxv.example/p1.png", "email:qzxv@mail.example"}
	twin := []string{"Twin Keeper", "https://avatars.twin.example/p1.png", "email:twin@mail.example"}
	personalScene(t, c, tok, secret)
	personalScene(t, c, twinTok, twin) // t2: the same member and board names
	for _, tn := range []string{"t1", "t2"} {
		if amended := storedNotification(t, c, tn, "standings.amended"); strings.Contains(amended, "Qzxv") ||
			strings.Contains(amended, "Twin") || !strings.Contains(amended, `"sealed":`) {
			t.Fatalf("%s: the notification naming p1 is stored as %s", tn, amended)
		}
	}
	// By construction, before any snapshot: the streams and their Raft
	// logs (which erasure cannot rewrite) hold the notification and the
	// events, but none of the personal data in clear.
	if got := dirsHolding(t, c, `"type":"standings.amended"`); !anyIn(got, "_js_") {
		t.Fatalf("no Raft log holds the notification in clear: the search proves nothing\n%s", strings.Join(got, "\n"))
	}
	if got := dirsHolding(t, c, append(secret, twin...)...); len(got) > 0 {
		t.Fatalf("the streams hold personal data in clear:\n%s", strings.Join(got, "\n"))
	}
	restartAll(t, c) // every node's snapshot, and the shared one, hold the data now, sealed
	if got := dirsHolding(t, c, clearMarker); !anyIn(got, "snapshots") {
		t.Fatalf("no snapshot holds a member id in clear: the search proves nothing\n%s", strings.Join(got, "\n"))
	}
	if got := dirsHolding(t, c, append(secret, twin...)...); len(got) > 0 {
		t.Fatalf("the snapshots hold personal data in clear:\n%s", strings.Join(got, "\n"))
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
	if got := dirsHolding(t, c, secret...); len(got) > 0 {
		t.Fatalf("after the erasure, before a restart:\n%s", strings.Join(got, "\n"))
	}
	restartAll(t, c)
	for _, n := range nodes {
		if err := cmp.Or(erasedOn(n, tok, secret), keptOn(n, twinTok, twin)); err != nil {
			t.Fatal(err)
		}
	}
	if amended := storedNotification(t, c, "t2", "standings.amended"); !strings.Contains(amended, `"sealed":`) {
		t.Fatalf("t2's notification lost its name: %s", amended)
	}
	for _, n := range nodes {
		stop(t, n.p)
	}
	if got := dirsHolding(t, c, secret...); len(got) > 0 {
		t.Fatalf("erased personal data on disk:\n%s", strings.Join(got, "\n"))
	}
	if got := dirsHolding(t, c, clearMarker); !anyIn(got, "snapshots") {
		t.Fatalf("no snapshot holds a member id in clear: the search proves nothing\n%s", strings.Join(got, "\n"))
	}
}

// clearMarker is a member id in the erasure tests' scene: member ids stay
// in clear (in the log, the snapshots, their Raft logs), so a search that
// finds it where personal data would be proves that it reads those files.
const clearMarker = "member-qzxv-marker"

// personalScene gives p1 of the tenant of tok, through the cluster's
// nodes, a profile (p's name and avatar URL) and an e-mail alias (p[2]),
// submits and removes it by the alias through the others once they
// resolve it (logged as p1), and disqualifies p2: a standings.amended
// notification naming p1 (stored sealed). clearMarker ranks on b.
func personalScene(t *testing.T, c *cluster, tok string, p []string) {
	t.Helper()
	for _, r := range []struct {
		node               int
		method, path, body string
	}{
		{0, "PUT", "/v1/boards/b", `{}`},
		{0, "PUT", "/v1/boards/c", `{}`},
		{0, "POST", "/v1/boards/b/scores", `{"scores":[{"member":"p1","score":10},{"member":"p2","score":5},{"member":"` + clearMarker + `","score":1}]}`},
		{1, "POST", "/v1/identities", `{"member":"p1","aliases":["` + p[2] + `"]}`},
		{1, "PUT", "/v1/members/p1/profile", `{"name":"` + p[0] + `","avatar":"` + p[1] + `"}`},
		{0, "GET", "/v1/identities/" + p[2], ``},
		{0, "POST", "/v1/boards/b/scores", `{"member":"` + p[2] + `","score":12}`},
		{2, "GET", "/v1/identities/" + p[2], ``},
		{2, "POST", "/v1/boards/c/scores", `{"member":"` + p[2] + `","score":1}`},
		{2, "DELETE", "/v1/boards/c/members/" + p[2], ``},
		{1, "POST", "/v1/boards/b/disqualify", `{"member":"p2","reason":"ticket 1"}`},
	} {
		await.For(t, 30*time.Second, func() error { // node 2 serves the tenant once it discovered its stream
			if status, err := call(r.method, c.nodes[r.node].p.url(r.path), tok, r.body, nil); status != 200 {
				return fmt.Errorf("%s %s: %d %v", r.method, r.path, status, err)
			}
			return nil
		})
	}
}

// twinTenant adds tenant t2 to the cluster's key file, has every node
// reload it (SIGHUP) and returns an admin token of t2 once every node
// accepts it.
func twinTenant(t *testing.T, c *cluster) string {
	t.Helper()
	secret := func(c string) string { return base64.StdEncoding.EncodeToString([]byte(strings.Repeat(c, 32))) }
	body := fmt.Sprintf(`{"tenants":{"t1":{"keys":[{"kid":"k1","alg":"HS256","secret":%q}]},"t2":{"keys":[{"kid":"k2","alg":"HS256","secret":%q}]}}}`,
		secret("k"), secret("w")) // t1's as keyFile writes it
	if err := os.WriteFile(c.keys, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := auth.LoadKeys(c.keys)
	if err != nil {
		t.Fatal(err)
	}
	sk, _ := keys.SigningKey("k2")
	tok, err := auth.Mint(sk, auth.Claims{Tenant: "t2", Roles: auth.RoleAdmin, Expiry: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.nodes {
		if err := n.p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		await.For(t, 10*time.Second, func() error {
			if status, err := call("GET", n.p.url("/v1/boards"), tok, "", nil); status != 200 {
				return fmt.Errorf("%s: t2's token: %d %v", n.p.addr, status, err)
			}
			return nil
		})
	}
	return tok
}

// keptOn reports how node n lost the twin tenant's data, if it did.
func keptOn(n *clusterNode, tok string, p []string) error {
	var prof map[string]any
	if status, _ := call("GET", n.p.url("/v1/members/p1/profile"), tok, "", &prof); status != 200 || prof["name"] != p[0] {
		return fmt.Errorf("%s: t2's profile %d %v", n.p.addr, status, prof)
	}
	if status, _ := call("GET", n.p.url("/v1/identities/"+p[2]), tok, "", nil); status != 200 {
		return fmt.Errorf("%s: t2's alias answers %d", n.p.addr, status)
	}
	return nil
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
			if errors.Is(err, fs.ErrNotExist) { // a running node's JetStream removed it meanwhile (a compaction)
				return nil
			}
			if err != nil || !d.Type().IsRegular() { // directories, and the node's admin socket (cluster.sock)
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

// storedNotification returns the body of the first of tenant's
// notifications of type typ stored in the notifications' stream, as
// stored.
func storedNotification(t *testing.T, c *cluster, tenant, typ string) string {
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
			m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(notify.Subject(tenant)))
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
