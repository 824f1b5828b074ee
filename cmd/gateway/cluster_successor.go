package main

import (
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/rankwire/rankwire/internal/clusterops"
)

// successor names the replica of stream that this node, its stopping
// leader, hands the leadership to: of the replicas caught up, the one
// routed to this node most recently (clusterops.Successor: in a rolling
// restart, one the operator has restarted already), or "" for Raft's
// choice. Read in-process: the stream's replicas from this node's server
// (its leader's view), the routes' ages from its route table.
func (cs *clusterSystem) successor(stream string) string {
	for _, s := range cs.streams(false) {
		if s.Name == stream && s.Cluster != nil {
			return clusterops.Successor(cs.candidates(s.Cluster.Replicas))
		}
	}
	return ""
}

// metaSuccessor is successor for the JetStream meta group, whose leader
// places and removes streams and consumers: handed, like a stream's, to
// the peer a rolling restart is done with, it moves once rather than
// with every node stopped.
func (cs *clusterSystem) metaSuccessor() string {
	info, err := cs.srv.Jsz(nil)
	if err != nil || info.Meta == nil {
		return ""
	}
	return clusterops.Successor(cs.candidates(info.Meta.Replicas))
}

// candidates are the replicas that are online, with their routes' ages.
func (cs *clusterSystem) candidates(replicas []*server.PeerInfo) []clusterops.Candidate {
	var out []clusterops.Candidate
	since := cs.routedSince()
	for _, p := range replicas {
		if p != nil && !p.Offline {
			out = append(out, clusterops.Candidate{Name: p.Name, Lag: p.Lag, Active: p.Active, Since: since[p.Name]})
		}
	}
	return out
}

// routedSince returns, per peer server name, when this node's oldest
// route to it was made (a route pool has several connections per peer).
func (cs *clusterSystem) routedSince() map[string]time.Time {
	out := map[string]time.Time{}
	rz, err := cs.srv.Routez(nil)
	if err != nil {
		return out
	}
	for _, r := range rz.Routes {
		if t, ok := out[r.RemoteName]; !ok || r.Start.Before(t) {
			out[r.RemoteName] = r.Start
		}
	}
	return out
}
