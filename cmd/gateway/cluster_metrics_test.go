package main

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// TestDepartedPeerInMetrics has a fourth node join a three-node cluster
// and leave, and checks that the meta leader's metrics count it offline
// and export for how long (what the alert rule RankwireClusterPeerOffline
// reads), and that every node counts its routes and the streams' leaders;
// and, the fourth having stopped cleanly (its leaving beat), that the
// three count three cluster servers again, not four (issue 25).
func TestDepartedPeerInMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: four gateway processes")
	}
	c := clusterWithDeparted(t, false)
	departedInMetrics(t, c)
	serversCounted(t, c, "3")
}

// serversCounted waits until every node counts want cluster servers for
// its majority (rankwire_cluster_servers).
func serversCounted(t *testing.T, c *cluster, want string) {
	t.Helper()
	await.For(t, 10*time.Second, func() error {
		for _, n := range c.nodes {
			if got := metricOf(t, n, "rankwire_cluster_servers"); got != want {
				return fmt.Errorf("a node counts %s cluster servers, want %s", got, want)
			}
		}
		return nil
	})
}

// clusterWithDeparted starts a three-node cluster with a board, has a
// fourth node join it and stops that node (SIGTERM, or kill -9 where
// kill): a departed meta peer.
func clusterWithDeparted(t *testing.T, kill bool) *cluster {
	t.Helper()
	c := startCluster(t, 3)
	if status, err := call("PUT", c.nodes[0].p.url("/v1/boards/b"), c.tok, `{"policy":"latest"}`, nil); status != 200 {
		t.Fatalf("create board through node 1: %d %v", status, err)
	}
	fourth := c.newNode(t, len(c.nodes))
	fourth.wait(t, fourth.launch(t))
	// Listening is not joined: a node stopped before the meta group took
	// it in leaves no peer behind.
	awaitReadyz(t, fourth, http.StatusOK, 60*time.Second)
	if kill {
		serversCounted(t, c, "4")
		fourth.kill9(t)
		return c
	}
	stop(t, fourth.p)
	return c
}

// departedInMetrics waits for the meta leader's metrics to count one
// offline peer and export how long n4 has been so, and checks every node
// counts its routes and the streams' leaders.
func departedInMetrics(t *testing.T, c *cluster) {
	t.Helper()
	await.For(t, 20*time.Second, func() error {
		for _, n := range c.nodes {
			if metricOf(t, n, "rankwire_cluster_meta_leader") != "1" {
				continue
			}
			for _, series := range []string{`rankwire_cluster_meta_peers\{state="offline"\} 1`, `rankwire_cluster_peer_offline_seconds\{peer="n4"\} `,
				`rankwire_cluster_meta_peers\{state="online"\} 3`} {
				if !regexp.MustCompile(`(?m)^` + series).MatchString(metricsOf(t, n)) {
					return fmt.Errorf("the meta leader's metrics have no %s", series)
				}
			}
			return nil
		}
		return fmt.Errorf("no node says it leads the meta group")
	})
	led := 0
	for _, n := range c.nodes {
		if got := metricOf(t, n, "rankwire_cluster_routes"); got == "0" {
			t.Errorf("a node counts %s routes", got)
		}
		v, _ := strconv.Atoi(metricOf(t, n, `rankwire_cluster_streams\{leader="led"\}`))
		led += v
		if got := metricOf(t, n, `rankwire_cluster_streams\{leader="none"\}`); got != "0" {
			t.Errorf("a node counts %s streams without a leader", got)
		}
	}
	if led == 0 {
		t.Errorf("no node says it leads a stream")
	}
}

// metricsOf returns n's /metrics page.
func metricsOf(t *testing.T, n *clusterNode) string {
	t.Helper()
	at := regexp.MustCompile(`msg=ready .*metrics_addr=(\S+)`)
	lines := n.p.logged(at)
	resp, err := http.Get("http://" + at.FindStringSubmatch(lines[len(lines)-1])[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}
