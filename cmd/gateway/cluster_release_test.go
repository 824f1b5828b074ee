package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/await"
)

// TestPlannedFollowerStop stops, with SIGTERM, a node that leads no
// stream, under a Go SDK writer pinned to the two others. Every replica
// reads the stream through a consumer on its own server
// (clusterops.CreateLocal), so the stopping node hosts no other node's
// reader: a consumer left on it would vanish with it and be noticed only
// after two missed heartbeats (about 1 s, every write through its reader
// waiting that long to be applied: the fault suite's rolling restart saw
// 1.03–1.10 s before). It checks the placement, that no other replica lost
// its consumer to missed heartbeats, no failed call, and every
// acknowledged submission on the survivors; it logs the writer's longest
// gap. (Where a consumer still lands elsewhere, CreateLocal's last resort,
// the stopping node deletes it before it exits: clusterops.Release, the
// same deletion as a leader's step-down, TestKeepDroppingDeletesLateConsumers.)
func TestPlannedFollowerStop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes")
	}
	c := startSettledCluster(t)
	leader := c.streamLeader(t, "RW_t1")
	stop := (leader + 1) % len(c.nodes)
	c.readersLocal(t, "RW_t1")
	reader, other := leader, 3-stop-leader
	t.Logf("RW_t1's leader is n%d; n%d stops", leader+1, stop+1)

	w, termAt, took := plannedStop(t, c, []*clusterNode{c.nodes[reader], c.nodes[other]}, c.nodes[stop])
	t.Logf("n%d exited %v after SIGTERM; the writer: %d acknowledged, %d failed calls, longest gap from the SIGTERM on %v",
		stop+1, took.Round(time.Millisecond), w.acked.Load(), w.failed.Load(), w.longestAfter.Round(time.Millisecond))
	w.checkGaps(t, c, termAt)

	missed := regexp.MustCompile(`replica's consumer lost.*heartbeat`)
	for _, i := range []int{reader, other} {
		if got := c.nodes[i].p.logged(missed); len(got) != 0 {
			t.Errorf("n%d's replica waited for missed heartbeats: %s", i+1, got[0])
		}
	}
	for _, n := range []*clusterNode{c.nodes[reader], c.nodes[other]} {
		await.For(dumpOnFail{t, c}, 10*time.Second, func() error { return holdsAcked(n, c.tok, int(w.acked.Load())) })
	}
}

// readersLocal waits until every node's replica of stream reads through
// one consumer on its own server. CreateLocal keeps a consumer elsewhere
// as its last resort (about one call in 130): such a one is deleted here,
// and its reader makes another, placed anew (its placement is
// internal/clusterops's test).
func (c *cluster) readersLocal(t *testing.T, stream string) {
	t.Helper()
	prefixes := c.consumerPrefixes(t)
	js, done := c.jetStream(t, c.nodes[0])
	defer done()
	await.For(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		placed, err := consumerHosts(ctx, js, stream)
		if err != nil {
			return err
		}
		hosts := map[int][]string{} // node → where its consumers live
		for name, on := range placed {
			for i, p := range prefixes {
				if strings.HasPrefix(name, p) {
					hosts[i] = append(hosts[i], on)
				}
			}
		}
		for i := range c.nodes {
			if len(hosts[i]) != 1 {
				return fmt.Errorf("n%d's replica has consumers on %v, want one", i+1, hosts[i])
			}
			if hosts[i][0] != nodeName(i) {
				for name, on := range placed {
					if strings.HasPrefix(name, prefixes[i]) {
						_ = js.DeleteConsumer(ctx, stream, name) // its reader makes another
						return fmt.Errorf("n%d's replica read through a consumer on %s; deleted", i+1, on)
					}
				}
			}
		}
		return nil
	})
}

// consumerHosts returns stream's consumers by name with the server each is
// placed on.
func consumerHosts(ctx context.Context, js jetstream.JetStream, stream string) (map[string]string, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	l := s.ListConsumers(ctx)
	for info := range l.Info() {
		if info.Cluster != nil {
			out[info.Name] = info.Cluster.Leader
		}
	}
	return out, l.Err()
}

// consumerPrefixes returns, per node, the prefix of its replicas'
// consumers' names, as its log names it.
func (c *cluster) consumerPrefixes(t *testing.T) []string {
	t.Helper()
	re := regexp.MustCompile(`replicas read through consumers" prefix=(\S+)`)
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		got := n.p.logged(re)
		if len(got) != 1 {
			t.Fatalf("n%d logged %d prefixes of its consumers, want 1", i+1, len(got))
		}
		out[i] = re.FindStringSubmatch(got[0])[1]
	}
	return out
}

// nodeName is the name of the cluster's node i.
func nodeName(i int) string { return fmt.Sprint("n", i+1) }
