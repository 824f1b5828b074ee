package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/shred"
)

// TestEraseCompactsRaftLogs: on a 3-node cluster, the Raft logs of the
// members' keys stream hold the proposal that created a member's key, and
// the snapshot bucket's Raft log a shared snapshot with the member's
// profile sealed (a member id in clear in it proves the search); no file
// holds the profile or the alias in clear, before the erasure or after,
// Raft log blocks included. Once every node applied the erasure, without a
// restart, no file holds the destroyed key, Raft log blocks included (they
// are compacted: internal/raftcompact); nor after a restart. The file
// store may keep a compacted entry's bytes in a small block (the limit
// docs/SECURITY.md names): the test fails if it ever does for a key.
func TestEraseCompactsRaftLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes, restarted")
	}
	c := startCluster(t, 3, "RANKWIRE_FINGERPRINT_EVERY=1") // every event a checkpoint: its snapshot, agreed, is shared
	nodes, tok := c.nodes, c.tok
	secret := []string{"Qzxv Erasable", "https://avatars.qzxv.example/p1.png", "email:qzxv@mail.example"}
	personalScene(t, c, tok, secret)
	// The keys' Raft logs hold the key (a restart compacts them: the
	// check after the erasure then covers the keys stream's store).
	// Every node's snapshot, and the shared one, hold the data after a
	// restart. Then an event, a checkpoint: its snapshot, holding the data
	// sealed, agreed by the cluster, goes to the shared bucket, whose Raft
	// log on the two others (running on) holds it; and node 0 restarts.
	keys := memberKeys(t, c)
	if got := dirsHolding(t, c, keys...); !anyIn(got, "_js_") {
		t.Fatalf("no Raft log holds a member's key: the search proves nothing\n%s", strings.Join(got, "\n"))
	}
	restartAll(t, c)
	await.For(t, 30*time.Second, func() error {
		if status, err := call("POST", nodes[0].p.url("/v1/boards/b/scores"), tok, `{"member":"p2","score":6}`, nil); status != 200 {
			return fmt.Errorf("score: %d %v", status, err)
		}
		return nil
	})
	stop(t, nodes[0].p)
	nodes[0].wait(t, nodes[0].launch(t))
	await.For(t, 20*time.Second, func() error { // the shared snapshot reaches the others' Raft logs
		if got := dirsHolding(t, c, clearMarker); !anyIn(got, "_js_") || !anyIn(got, "snapshots") {
			return fmt.Errorf("no Raft log, or no snapshot, holds a member id before the erasure: the search proves nothing\n%s", strings.Join(got, "\n"))
		}
		return nil
	})
	if got := dirsHolding(t, c, secret...); len(got) > 0 {
		t.Fatalf("personal data in clear before the erasure (sealed in the snapshots too):\n%s", strings.Join(got, "\n"))
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
	// Without a restart: every node compacts the Raft logs of the streams
	// that held the data once it applied the erasure (internal/raftcompact),
	// and every shared snapshot replaced before it was wiped when it was
	// replaced (internal/snapbucket, never a mere purge), so that no file
	// holds the profile, and none the destroyed key.
	destroyed := without(keys, memberKeys(t, c))
	if len(destroyed) == 0 {
		t.Fatal("the erasure destroyed no key")
	}
	start := time.Now()
	if got := dirsHolding(t, c, secret...); len(got) > 0 {
		t.Fatalf("personal data in clear after the erasure:\n%s", strings.Join(got, "\n"))
	}
	await.For(t, 45*time.Second, func() error {
		if got := dirsHolding(t, c, destroyed...); len(got) > 0 {
			return fmt.Errorf("after the erasure, before a restart:\n%s\nthe nodes' lines of it:\n%s", strings.Join(got, "\n"), erasureLines(c))
		}
		return nil
	})
	t.Logf("no file holds the %d destroyed keys, %v after the erasure applied",
		len(destroyed), time.Since(start).Round(time.Millisecond))
	restartAll(t, c)
	if got := dirsHolding(t, c, secret...); len(got) > 0 {
		t.Fatalf("personal data in clear after the erasure and a restart:\n%s", strings.Join(got, "\n"))
	}
	if got := dirsHolding(t, c, destroyed...); len(got) > 0 {
		t.Fatalf("after the erasure and a restart:\n%s", strings.Join(got, "\n"))
	}
}

// erasureLines returns each node's data directory and log lines of the
// erasure, its snapshots and the compactions, for a failure's message.
func erasureLines(c *cluster) string {
	var out []string
	for _, n := range c.nodes {
		out = append(out, n.env[1])
		out = append(out, n.p.logged(regexp.MustCompile(`raftcompact|shared snapshot|erase`))...)
	}
	return strings.Join(out, "\n")
}

// memberKeys returns the keys held in the members' keys stream (read
// through node 0), each as its 32 bytes.
func memberKeys(t *testing.T, c *cluster) []string {
	t.Helper()
	js, done := c.jetStream(t, c.nodes[0])
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, shred.Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
		if m, err := st.GetMsg(ctx, seq); err == nil && len(m.Data) == 32 { // a deleted one or a tombstone: not a key
			keys = append(keys, string(m.Data))
		}
	}
	return keys
}

// without returns those of a not in b.
func without(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
