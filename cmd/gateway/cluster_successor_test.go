package main

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// TestRollingRestartSuccessor is a rolling restart's step after a
// follower's: that follower stopped with SIGTERM, started again and ready,
// then the stream's leader stopped. The leader must name the restarted
// follower as the stream's successor (clusterops.Successor): it is the
// one the rolling restart is done with, where Raft's own choice, the
// other follower half the time, would be stopped next and hand the
// leadership over again, a write gap each time (the fault suite's rolling
// restart saw three handovers in one restart of three nodes).
func TestRollingRestartSuccessor(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes")
	}
	c := startCluster(t, 3)
	await.For(t, 20*time.Second, func() error { // a 503 while the stream's first election runs
		if status, err := call("PUT", c.nodes[0].p.url("/v1/boards/b"), c.tok, `{"policy":"latest"}`, nil); status != 200 {
			return fmt.Errorf("create board through node 1: %d %v", status, err)
		}
		return nil
	})
	settled(t, c)
	leader := c.streamLeader(t, "RW_t1")
	restarted := (leader + 1) % len(c.nodes)
	t.Logf("RW_t1's leader is n%d; restarting n%d", leader+1, restarted+1)
	sigterm(t, c.nodes[restarted])
	addr := c.nodes[restarted].launch(t)
	c.nodes[restarted].wait(t, addr)
	awaitReadyz(t, c.nodes[restarted], http.StatusOK, 60*time.Second)
	c.awaitCaughtUp(t, c.nodes[leader], "RW_t1")

	sigterm(t, c.nodes[leader])
	handed := regexp.MustCompile(`stream leadership handed over" stream=RW_t1 leader=(n[0-9]) named=(n[0-9]*)`)
	got := c.nodes[leader].p.logged(handed)
	if len(got) != 1 {
		t.Fatalf("the leader logged %d handovers of RW_t1, want 1; its log:\n%s", len(got), c.nodes[leader].p.report())
	}
	m := handed.FindStringSubmatch(got[0])
	t.Logf("the leader: %s", got[0])
	if want := nodeName(restarted); m[1] != want || m[2] != want {
		t.Fatalf("RW_t1 went to %s (named %q), want the restarted %s", m[1], m[2], want)
	}
	var rest []*clusterNode
	for i, n := range c.nodes {
		if i != leader {
			rest = append(rest, n)
		}
	}
	stopAllWithin(t, rest, 5*time.Second)
}

// awaitCaughtUp waits until stream's info, asked of node n, names every
// other replica current: the restarted one has stored what it missed.
func (c *cluster) awaitCaughtUp(t *testing.T, n *clusterNode, stream string) {
	t.Helper()
	js, done := c.jetStream(t, n)
	defer done()
	await.For(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, stream)
		if err != nil {
			return err
		}
		ci := s.CachedInfo().Cluster
		if ci == nil || len(ci.Replicas) != len(c.nodes)-1 {
			return fmt.Errorf("%s's replicas: %+v", stream, ci)
		}
		for _, p := range ci.Replicas {
			if !p.Current {
				return fmt.Errorf("%s's replica %s is not current (lag %d)", stream, p.Name, p.Lag)
			}
		}
		return nil
	})
}
