package faults

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// departPeer shapes the cluster for departed-removed and
// departed-not-removed before the load: a spare node joins (it lists the
// others and itself in --routes, as docs/CLUSTERING.md "Peers" says a new
// node does), is ready, is taken into the JetStream meta group, and stops
// cleanly (SIGTERM), so that the meta group keeps it as an offline peer;
// with remove, `gateway cluster remove` (asked of the first node) then
// takes it out of the meta group for good. The cluster's streams were made
// before it joined, so it held no replica of them.
func (r *run) departPeer(ctx context.Context, remove bool) error {
	if len(r.c.Spares) == 0 {
		return fmt.Errorf("faults: a departed peer needs a spare node")
	}
	spare, asked := r.c.Spares[0], r.c.Nodes[0]
	if err := r.c.StartNode(spare); err != nil {
		return err
	}
	if err := r.c.WaitReady(ctx, spare, 90*time.Second); err != nil {
		return err
	}
	// Listening is not joined: a node stopped before the meta group took
	// it in leaves no peer behind.
	if err := r.awaitPeer(ctx, asked, spare.Name, "online"); err != nil {
		return err
	}
	if err := spare.Stop(syscall.SIGTERM, 60*time.Second); err != nil {
		return err
	}
	if !remove {
		return r.awaitPeer(ctx, asked, spare.Name, "offline", "behind")
	}
	if err := r.removePeer(ctx, asked, spare.Name); err != nil {
		return err
	}
	return r.awaitPeer(ctx, asked, spare.Name) // listed in no state: gone
}

// clusterCLI runs `gateway cluster args... --data <n's data>` and returns
// its output.
func (r *run) clusterCLI(ctx context.Context, n *Node, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	args = append([]string{"cluster", args[0], "--data", n.Data}, args[1:]...)
	out, err := exec.CommandContext(ctx, r.c.Binary, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("faults: gateway %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// awaitPeer waits up to 60 s until `gateway cluster peers`, asked of n,
// lists peer in one of states (none: does not list it).
func (r *run) awaitPeer(ctx context.Context, n *Node, peer string, states ...string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := r.clusterCLI(ctx, n, "peers")
		state, listed := peerStates(strings.NewReader(out))[peer]
		if err == nil && (slices.Contains(states, state) || (len(states) == 0 && !listed)) {
			r.cfg.Log.Info("peers", "asked", n.Name, "table", out)
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("faults: %s not %v within 60s in gateway cluster peers (%v): %s", peer, states, err, out)
		}
		sleep(ctx, 250*time.Millisecond) // polling the meta leader's view: nothing to await but its answer
	}
}

// removePeer runs `gateway cluster remove peer`, again while it refuses
// (an online peer: the meta leader has not yet seen it leave), for up to
// 30 s.
func (r *run) removePeer(ctx context.Context, n *Node, peer string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := r.clusterCLI(ctx, n, "remove", peer)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		sleep(ctx, 250*time.Millisecond)
	}
}

// peerStates reads `gateway cluster peers`' table: each node's STATE.
func peerStates(out io.Reader) map[string]string {
	states := map[string]string{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] != "NODE" {
			states[f[0]] = f[1]
		}
	}
	return states
}

// killLeaderAfterDeparture is the departed faults' injection: kill -9 of
// the stream's leader for Hold, as kill9-leader, with the survivors'
// /readyz answers watched until the leader is back and they are ready
// (they are healthy nodes: a departed peer, removed or stopped cleanly,
// must not make them count a majority of four, docs/CLUSTERING.md "Who
// counts as a cluster server"), and, once the leader is back, the meta
// leader's view of the peers (`gateway cluster peers` and the peer
// metrics the alert RankwireClusterPeerOffline reads) in the run's note.
// A survivor that said anything but 200 fails the run, with how long.
func (r *run) killLeaderAfterDeparture(ctx context.Context) error {
	n, err := r.target(ctx, true)
	if err != nil {
		return err
	}
	var survivors []*Node
	for _, m := range r.c.Nodes {
		if m != n {
			survivors = append(survivors, m)
		}
	}
	before := peerMetrics(ctx, r.c.Nodes)
	killed := time.Now()
	r.tl.mark(n, "SIGKILL")
	n.Stop(syscall.SIGKILL, 10*time.Second)
	track := watchReady(ctx, survivors, killed)
	sleep(ctx, r.cfg.Hold)
	err = r.restart(ctx, n)
	track.awaitReady(ctx, time.Second) // a survivor's probes may trail the restart by one period
	track.stop()
	off, total := track.notReady(time.Since(killed))
	peers, _ := r.clusterCLI(ctx, survivors[0], "peers")
	r.note = fmt.Sprintf("killed %s (leader); survivors not 200: %s; %s; peers after: %s; before the kill %s; after %s", n.Name, off, track.describe(),
		strings.Join(strings.Fields(peers), " "), before, peerMetrics(ctx, r.c.Nodes))
	if err == nil && total > 0 {
		err = fmt.Errorf("faults: healthy survivors said not 200 after a departure: %s", off)
	}
	return err
}

// notReady sums, per node, the time its answers were not 200 up to end
// (an offset from the start): "n2 6.1s, n3 0.0s", and the total.
func (t *readyTrack) notReady(end time.Duration) (string, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var parts []string
	var total time.Duration
	for _, name := range t.nodes {
		var off time.Duration
		cs := t.changes[name]
		for i, c := range cs {
			if c.ready {
				continue
			}
			until := end
			if i+1 < len(cs) {
				until = cs[i+1].at
			}
			off += until - c.at
		}
		total += off
		parts = append(parts, fmt.Sprintf("%s %.1fs", name, off.Seconds()))
	}
	return strings.Join(parts, ", "), total
}

// peerMetrics is the meta leader's peer series (rankwire_cluster_meta_peers
// and rankwire_cluster_peer_offline_seconds, the alert's input) on one
// line, or why none was read.
func peerMetrics(ctx context.Context, nodes []*Node) string {
	hc := &http.Client{Timeout: 2 * time.Second}
	for _, n := range nodes {
		body, err := getMetrics(ctx, hc, n)
		if err != nil {
			continue
		}
		series := metaSeries(body)
		body.Close()
		if len(series) > 0 {
			return "metrics of the meta leader " + n.Name + ": " + strings.Join(series, ", ")
		}
	}
	return "no node's metrics say it leads the meta group"
}

// metaSeries returns the peer series of a /metrics body where it is the
// meta leader's (rankwire_cluster_meta_leader 1), else none.
func metaSeries(body io.Reader) []string {
	var series []string
	leader := false
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "rankwire_cluster_meta_leader 1":
			leader = true
		case strings.HasPrefix(line, "rankwire_cluster_meta_peers{"), strings.HasPrefix(line, "rankwire_cluster_peer_offline_seconds{"):
			series = append(series, strings.TrimPrefix(line, "rankwire_cluster_"))
		}
	}
	if !leader {
		return nil
	}
	return series
}
