package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// TestClusterRemovePeer has a fourth node join a three-node cluster and
// leave, and removes it with `gateway cluster remove` through node 1's
// admin socket: `gateway cluster peers` lists it offline (or behind:
// killed, it said nothing) before and not
// after, the meta leader's metrics count three peers, none offline, and
// the refusals (the node itself, an online node, an unknown one) say why.
// The fourth dies with kill -9 (no leaving beat): the three count four
// cluster servers until the removal, three at once after it (issue 25).
// Then a node is killed: the other two, a majority of three (not of four),
// keep a meta leader and take writes.
func TestClusterRemovePeer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: four gateway processes")
	}
	c := clusterWithDeparted(t, true)
	data := dataOf(t, c.nodes[0])
	await.For(t, 20*time.Second, func() error {
		out, err := clusterCLI(data, "peers")
		if err != nil || !regexp.MustCompile(`(?m)^n4\s+(offline|behind)\s`).MatchString(out) {
			return fmt.Errorf("n4 not listed offline or behind: %v\n%s", err, out)
		}
		return nil
	})
	out, _ := clusterCLI(data, "peers")
	t.Logf("gateway cluster peers, before:\n%s", out)
	for name, want := range map[string]string{"n1": "does not remove itself", "n2": "n2 is online", "n9": `no such meta peer: "n9"`} {
		if _, err := clusterCLI(data, "remove", name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("remove %s: %v, want an error saying %q", name, err, want)
		}
	}
	serversCounted(t, c, "4") // killed, not removed: still one of the servers
	if out, err := clusterCLI(data, "remove", "n4"); err != nil {
		t.Fatalf("remove n4: %v", err)
	} else {
		t.Logf("gateway cluster remove n4: %s", out)
	}
	await.For(t, 20*time.Second, func() error {
		out, err := clusterCLI(data, "peers")
		if err != nil || strings.Contains(out, "n4") || strings.Count(out, "\n") != 4 {
			return fmt.Errorf("n4 still listed: %v\n%s", err, out)
		}
		return nil
	})
	out, _ = clusterCLI(data, "peers")
	t.Logf("gateway cluster peers, after:\n%s", out)
	serversCounted(t, c, "3")
	metaPeersInMetrics(t, c, 3, 0)
	survivesOneLoss(t, c)
}

// metaPeersInMetrics waits for the meta leader's metrics to count online
// and offline peers.
func metaPeersInMetrics(t *testing.T, c *cluster, online, offline int) {
	t.Helper()
	await.For(t, 20*time.Second, func() error {
		n := c.nodes[c.metaLeader(t)]
		for _, series := range []string{fmt.Sprintf(`rankwire_cluster_meta_peers\{state="online"\} %d`, online),
			fmt.Sprintf(`rankwire_cluster_meta_peers\{state="offline"\} %d`, offline)} {
			if !regexp.MustCompile(`(?m)^` + series + `$`).MatchString(metricsOf(t, n)) {
				return fmt.Errorf("the meta leader's metrics have no %s", series)
			}
		}
		return nil
	})
}

// survivesOneLoss kills a node that leads neither the meta group nor the
// stream and checks that the two others still list the peers (a meta
// leader answers) and take a write.
func survivesOneLoss(t *testing.T, c *cluster) {
	t.Helper()
	meta, stream := c.metaLeader(t), c.streamLeader(t, "RW_t1")
	victim := 0
	for victim == meta || victim == stream {
		victim++
	}
	c.nodes[victim].kill9(t)
	var alive *clusterNode
	for i, n := range c.nodes {
		if i != victim {
			alive = n
		}
	}
	await.For(t, 20*time.Second, func() error {
		_, err := clusterCLI(dataOf(t, alive), "peers")
		return err
	})
	await.For(t, 20*time.Second, func() error {
		if status, err := call("POST", alive.p.url("/v1/boards/b/scores"), c.tok, `{"member":"m1","score":1}`, nil); status/100 != 2 {
			return fmt.Errorf("a write after n%d was killed: %d %v", victim+1, status, err)
		}
		return nil
	})
}

// clusterCLI runs `gateway cluster args...` against the node on data and
// returns its output, or its error text.
func clusterCLI(data string, args ...string) (string, error) {
	var out, errb bytes.Buffer
	if code := runCluster(append([]string{args[0], "--data", data}, args[1:]...), &out, &errb); code != 0 {
		return out.String(), fmt.Errorf("exit %d: %s", code, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// dataOf is node n's --data.
func dataOf(t *testing.T, n *clusterNode) string {
	t.Helper()
	for _, e := range n.env {
		if d, ok := strings.CutPrefix(e, "RANKWIRE_DATA="); ok {
			return d
		}
	}
	t.Fatal("no RANKWIRE_DATA")
	return ""
}
