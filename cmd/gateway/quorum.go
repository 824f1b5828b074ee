package main

import (
	"slices"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/readiness"
)

// Whether a leaderless stream can elect a leader, as this node sees it
// (issue 25): its replicas are read from the embedded server where this
// node hosts one, else from a leaderless replica's answer to the
// prober's stream info request (it lists every replica), else from the
// members remembered from the stream's last answer with a leader
// (streamView), and one counts as reachable where it is this node or a
// peer whose beat this node heard within beatSilence (peers.go), shorter
// than the prober's hold. Raft's own view is no good here: a follower
// hears only the leader, so the other followers' last contact is old in
// a healthy group. Where fewer than a majority are reachable, no
// election can succeed, and the readiness machine counts the tenant at
// once. Only streams with no usable leader are counted: a stream whose
// leader answers as reaching a majority is never judged by these counts;
// one whose leader answers as reaching fewer (leader) is, from the list
// that very answer gave, never from an older one.

// replicaCount is how many of a stream's replicas this node reaches,
// itself included, of how many.
type replicaCount struct{ up, of int }

// members is a stream's replicas as the prober's stream info request
// found them.
type members struct {
	// led: the answer named a leader (names: it first, then the other
	// replicas); else names, where any, are a leaderless replica's list.
	led   bool
	names []string
}

// membersIn returns the replicas a stream info answer names: the leader
// first where it has one (it lists the others), else every replica.
func membersIn(c *jetstream.ClusterInfo) members {
	m := members{led: c.Leader != ""}
	if m.led {
		m.names = append(m.names, c.Leader)
	}
	for _, r := range c.Replicas {
		m.names = append(m.names, r.Name)
	}
	return m
}

// replicaSight is what a leaderless stream's replicas are counted with:
// the replicated streams hosted here counted from this node's server, this
// node's name, the peers it heard at the last beat, and the members
// remembered from each stream's last answer with a leader.
type replicaSight struct {
	hosted map[string]replicaCount
	self   string
	hears  []string
	known  func(stream string) []string
}

// countReplicas remembers the members of every stream whose leader
// answered (by tenant index in answers), forgets those of tenants no
// longer open, and fills the replica counts of the tenants whose stream
// has no reachable leader; the others need none. Without a cluster, or
// where nothing names a stream's replicas, it fills nothing (held as
// before).
func (p *prober) countReplicas(ts []readiness.Tenant, answers []members) {
	if p.peers == nil {
		return
	}
	rememberAnswers(p.peers.view, ts, answers)
	if !slices.ContainsFunc(ts, func(t readiness.Tenant) bool { return t.Leader != "" }) {
		return
	}
	fillReplicas(ts, answers, p.peers.sight())
}

// rememberAnswers replaces in v the members of every stream in ts whose
// answer named a leader, and forgets those of streams not in ts (tenants
// no longer open here).
func rememberAnswers(v *streamView, ts []readiness.Tenant, answers []members) {
	open := make(map[string]bool, len(ts))
	for i, t := range ts {
		open[hub.StreamOf(t.Name)] = true
		if answers[i].led {
			v.remember(hub.StreamOf(t.Name), answers[i].names)
		}
	}
	v.retain(func(stream string) bool { return open[stream] })
}

// fillReplicas fills the replica counts of the tenants in ts whose stream
// has no reachable leader, where s or their answer names its replicas.
func fillReplicas(ts []readiness.Tenant, answers []members, s replicaSight) {
	for i := range ts {
		if ts[i].Leader == "" {
			continue // its leader answered reaching a majority: never judged by a count, whatever a list says
		}
		if c, ok := s.count(hub.StreamOf(ts[i].Name), answers[i]); ok {
			ts[i].Up, ts[i].Replicas = c.up, c.of
		}
	}
}

// count counts stream's replicas, most current source first: this node's
// server (with its offline marks), a leaderless replica's answer, the
// members remembered from the last answer with a leader.
func (s replicaSight) count(stream string, a members) (replicaCount, bool) {
	if c, ok := s.hosted[stream]; ok {
		return c, true
	}
	if !a.led && len(a.names) > 0 {
		return countNamed(s.self, a.names, s.hears), true
	}
	if names := s.known(stream); len(names) > 0 {
		return countNamed(s.self, names, s.hears), true
	}
	return replicaCount{}, false
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

// sight returns what a leaderless stream's replicas are counted with now.
func (w *peerWatch) sight() replicaSight {
	hosted, self, hears := w.replicaReach()
	return replicaSight{hosted: hosted, self: self, hears: hears, known: w.view.membersOf}
}

// replicaReach returns, by stream name, how many of each replicated
// stream hosted here its replicas this node reaches, as of the last beat
// (none where the server's streams cannot be read), with this node's
// name and the peers it heard then.
func (w *peerWatch) replicaReach() (map[string]replicaCount, string, []string) {
	w.mu.Lock()
	hears := w.hears
	w.mu.Unlock()
	info, err := w.view.streams()
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
