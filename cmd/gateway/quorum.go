package main

import (
	"slices"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/readiness"
)

// Whether a leaderless stream can elect a leader, as this node sees it
// (issue 25): its replicas are read from the embedded server where this
// node hosts one, else from a leaderless replica's answer to the
// prober's stream info request (it lists every replica), and one
// counts as reachable where it is this node or a peer whose beat this
// node heard within beatSilence (peers.go), shorter than the prober's
// hold. Raft's own view is no good here: a follower hears only the
// leader, so the other followers' last contact is old in a healthy
// group. Where fewer than a majority are reachable, no election can
// succeed, and the readiness machine counts the tenant at once.

// replicaCount is how many of a stream's replicas this node reaches,
// itself included, of how many.
type replicaCount struct{ up, of int }

// countReplicas fills the replica counts of the tenants whose stream has
// no reachable leader (named: the replicas a leaderless replica
// answered, by tenant index); the others need none. Without a cluster,
// or where neither the server's streams nor an answer name the
// replicas, it fills nothing (held as before).
func (p *prober) countReplicas(ts []readiness.Tenant, named [][]string) {
	if p.replicas == nil || !slices.ContainsFunc(ts, func(t readiness.Tenant) bool { return t.Leader != "" }) {
		return
	}
	counts, self, hears := p.replicas()
	for i := range ts {
		if ts[i].Leader == "" {
			continue
		}
		c, ok := counts[hub.StreamOf(ts[i].Name)]
		if !ok && len(named[i]) > 0 {
			c, ok = countNamed(self, named[i], hears), true
		}
		if ok {
			ts[i].Up, ts[i].Replicas = c.up, c.of
		}
	}
}

// countNamed counts the replicas named that are this node or heard, of
// all named.
func countNamed(self string, names, hears []string) replicaCount {
	c := replicaCount{of: len(names)}
	for _, n := range names {
		if n == self || slices.Contains(hears, n) {
			c.up++
		}
	}
	return c
}

// replicaReach returns, by stream name, how many of each replicated
// stream hosted here its replicas this node reaches, as of the last beat
// (none where the server's streams cannot be read), with this node's
// name and the peers it heard then.
func (w *peerWatch) replicaReach() (map[string]replicaCount, string, []string) {
	w.mu.Lock()
	hears := w.hears
	w.mu.Unlock()
	info, err := w.srv.Jsz(&server.JSzOptions{Accounts: true, Streams: true})
	if err != nil {
		return nil, w.node, hears
	}
	out := map[string]replicaCount{}
	for _, a := range info.AccountDetails {
		for _, s := range a.Streams {
			if c := s.Cluster; c != nil && len(c.Replicas) > 0 {
				out[s.Name] = countOf(w.node, c.Replicas, hears)
			}
		}
	}
	return out, w.node, hears
}

// countOf counts self and the replicas heard and not offline, of self and
// all replicas (the server lists this node among them only while the
// group has no leader).
func countOf(self string, replicas []*server.PeerInfo, hears []string) replicaCount {
	c := replicaCount{up: 1, of: 1}
	for _, r := range replicas {
		if r.Name == self {
			continue
		}
		c.of++
		if !r.Offline && slices.Contains(hears, r.Name) {
			c.up++
		}
	}
	return c
}
