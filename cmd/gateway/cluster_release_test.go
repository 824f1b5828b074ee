package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/await"
)

// TestPlannedFollowerStop stops, with SIGTERM, a node that leads no
// stream but hosts the consumer through which another node's replica
// reads the stream (the meta leader places each replica's consumer on any
// of the stream's peers), under a Go SDK writer pinned to that other node.
// The stopping node must delete the consumer before it exits, so that the
// reader makes a new one at once: left to vanish with the node, it is
// noticed only after two missed heartbeats (about 1 s), and every write
// through the reader waits that long to be applied (the fault suite's
// rolling restart: 1.03–1.10 s gaps). It checks that the stopping node
// logs the deletion, that the reader's replica did not lose its consumer
// to missed heartbeats, no failed call, and every acknowledged submission
// on the survivors; it logs the writer's longest gap.
func TestPlannedFollowerStop(t *testing.T) {
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
	stop := (leader + 1) % len(c.nodes)
	reader := c.readerHostedOn(t, "RW_t1", stop)
	other := 3 - stop - reader
	t.Logf("RW_t1's leader is n%d; n%d's replica reads through a consumer on n%d, which stops", leader+1, reader+1, stop+1)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := newHandoffWriter(t, c.tok, []*clusterNode{c.nodes[reader], c.nodes[other]})
	await.For(t, 30*time.Second, func() error { return w.submit(ctx) })
	wctx, stopWriter := context.WithCancel(ctx)
	writes := w.run(wctx)
	at := w.acked.Load()
	await.For(t, 20*time.Second, func() error { return w.progressed(at, 20) })
	termAt := time.Now()
	w.stopAt.Store(termAt.UnixNano())
	took := sigterm(t, c.nodes[stop])
	at = w.acked.Load()
	await.For(t, 20*time.Second, func() error { return w.progressed(at, 50) })
	stopWriter()
	<-writes
	t.Logf("n%d exited %v after SIGTERM; the writer: %d acknowledged, %d failed calls, longest gap from the SIGTERM on %v",
		stop+1, took.Round(time.Millisecond), w.acked.Load(), w.failed.Load(), w.longestAfter.Round(time.Millisecond))
	for _, g := range w.slow {
		t.Logf("a gap of %v, from %v to %v after the SIGTERM; the nodes' logs meanwhile:\n%s\nthe writer's requests meanwhile:\n%s", g[1].Sub(g[0]).Round(time.Millisecond),
			g[0].Sub(termAt).Round(time.Millisecond), g[1].Sub(termAt).Round(time.Millisecond), logsBetween(c, g[0], g[1]),
			w.trace.between(g[0], g[1], termAt))
	}

	released := regexp.MustCompile(`stream's consumers on this node deleted" stream=RW_t1 consumers_moved=[1-9]`)
	if got := c.nodes[stop].p.logged(released); len(got) == 0 {
		t.Errorf("n%d hosted n%d's consumer but logged no deletion of RW_t1's consumers; its log:\n%s", stop+1, reader+1, c.nodes[stop].p.tail())
	}
	missed := regexp.MustCompile(`replica's consumer lost.*heartbeat`)
	if got := c.nodes[reader].p.logged(missed); len(got) != 0 {
		t.Errorf("n%d's replica waited for missed heartbeats: %s", reader+1, got[0])
	}
	if f := w.failed.Load(); f != 0 {
		t.Fatalf("%d failed calls during a planned stop; first: %v", f, w.firstErr)
	}
	for _, n := range []*clusterNode{c.nodes[reader], c.nodes[other]} {
		await.For(dumpOnFail{t, c}, 10*time.Second, func() error { return holdsAcked(n, c.tok, int(w.acked.Load())) })
	}
}

// readerHostedOn returns the index of a node other than host whose replica
// of stream reads through a consumer placed on host. Placement is the meta
// leader's random pick among the stream's peers: while there is none, it
// deletes one such reader's consumer elsewhere, whose reader makes a new
// one at once, and looks again once every node's replica has one.
func (c *cluster) readerHostedOn(t *testing.T, stream string, host int) int {
	t.Helper()
	prefixes := c.consumerPrefixes(t)
	js, done := c.jetStream(t, c.nodes[host])
	defer done()
	reader := -1
	await.For(t, 60*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		placed, err := consumerHosts(ctx, js, stream)
		if err != nil {
			return err
		}
		readers := map[int]string{} // node → its consumer's host
		var moveable []string
		for name, on := range placed {
			for i, p := range prefixes {
				if !strings.HasPrefix(name, p) {
					continue
				}
				readers[i] = on
				if i != host && on == nodeName(host) {
					reader = i
					return nil
				}
				if i != host {
					moveable = append(moveable, name)
				}
			}
		}
		if len(readers) < len(c.nodes) || len(moveable) == 0 {
			return fmt.Errorf("not every replica reads %s yet: %v", stream, readers)
		}
		if err := js.DeleteConsumer(ctx, stream, moveable[0]); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return err
		}
		return fmt.Errorf("no reader's consumer on n%d: %v; deleted %s", host+1, readers, moveable[0])
	})
	return reader
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
