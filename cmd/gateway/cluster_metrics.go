package main

import (
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"
)

// clusterCollector exports the embedded JetStream cluster's membership and
// leaderships, read from the server in-process at each scrape (one Jsz of
// every account's streams: O(streams), shared with the cluster's other
// readers within a beat: streamView). Safe for concurrent scrapes.
type clusterCollector struct {
	view *streamView // the embedded server (view.srv) and its streams

	mu      sync.Mutex           // guards the field below
	offline map[string]time.Time // peer → the first scrape that saw it not current, on the meta leader
}

var (
	descMetaLeader = prometheus.NewDesc("rankwire_cluster_meta_leader",
		"1 where this node leads the JetStream meta group (whose view of the peers is authoritative), else 0.", nil, nil)
	descMetaPeers = prometheus.NewDesc("rankwire_cluster_meta_peers",
		"JetStream meta group peers as this node sees them, by state: online, behind (not heard from lately or not caught up), offline (left).",
		[]string{"state"}, nil)
	descPeerOffline = prometheus.NewDesc("rankwire_cluster_peer_offline_seconds",
		"Seconds since the meta leader first saw the peer behind or offline (exported by the meta leader only; the series ends when the peer is back or removed).",
		[]string{"peer"}, nil)
	descRoutes = prometheus.NewDesc("rankwire_cluster_routes",
		"Routes this node's NATS server holds to the other nodes.", nil, nil)
	descStreams = prometheus.NewDesc("rankwire_cluster_streams",
		"Replicated streams this node holds a replica of, by leader: led (this node leads them), other, none (no leader elected).",
		[]string{"leader"}, nil)
	descReplicaLag = prometheus.NewDesc("rankwire_cluster_replica_lag_max",
		"The largest lag, in Raft entries, of a replica of a stream this node leads.", nil, nil)
)

func newClusterCollector(view *streamView) *clusterCollector {
	return &clusterCollector{view: view, offline: map[string]time.Time{}}
}

// Describe implements prometheus.Collector.
func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMetaLeader, descMetaPeers, descPeerOffline, descRoutes, descStreams, descReplicaLag} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descRoutes, prometheus.GaugeValue, float64(c.view.srv.NumRoutes()))
	info, err := c.view.streams()
	if err != nil || info.Meta == nil {
		return
	}
	c.collectMeta(ch, info.Meta)
	c.collectStreams(ch, info.AccountDetails)
}

// collectMeta exports the meta group's peers and, on its leader, how long
// each peer not current has been so.
func (c *clusterCollector) collectMeta(ch chan<- prometheus.Metric, m *server.MetaClusterInfo) {
	leader := m.Leader == c.view.srv.Name()
	ch <- prometheus.MustNewConstMetric(descMetaLeader, prometheus.GaugeValue, b2f(leader))
	states := map[string]int{"online": 1, "behind": 0, "offline": 0} // this node is online
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	for _, p := range m.Replicas {
		state := peerState(p)
		states[state]++
		if state == "online" || !leader {
			continue
		}
		seen[p.Name] = true
		if _, ok := c.offline[p.Name]; !ok {
			c.offline[p.Name] = now
		}
		ch <- prometheus.MustNewConstMetric(descPeerOffline, prometheus.GaugeValue, now.Sub(c.offline[p.Name]).Seconds(), p.Name)
	}
	for name := range c.offline {
		if !seen[name] {
			delete(c.offline, name)
		}
	}
	for state, n := range states {
		ch <- prometheus.MustNewConstMetric(descMetaPeers, prometheus.GaugeValue, float64(n), state)
	}
}

// peerState is a meta peer's state: offline (it left), behind (not heard
// from lately, or not caught up), online.
func peerState(p *server.PeerInfo) string {
	switch {
	case p.Offline:
		return "offline"
	case !p.Current:
		return "behind"
	}
	return "online"
}

// collectStreams exports the replicated streams by leader and the largest
// lag of the replicas of those this node leads.
func (c *clusterCollector) collectStreams(ch chan<- prometheus.Metric, accounts []*server.AccountDetail) {
	counts := map[string]int{"led": 0, "other": 0, "none": 0}
	var lag uint64
	for _, a := range accounts {
		for _, s := range a.Streams {
			switch ci := s.Cluster; {
			case ci == nil || len(ci.Replicas) == 0 && ci.Leader == c.view.srv.Name():
				continue // not replicated
			case ci.Leader == "":
				counts["none"]++
			case ci.Leader == c.view.srv.Name():
				counts["led"]++
				for _, r := range ci.Replicas {
					lag = max(lag, r.Lag)
				}
			default:
				counts["other"]++
			}
		}
	}
	for leader, n := range counts {
		ch <- prometheus.MustNewConstMetric(descStreams, prometheus.GaugeValue, float64(n), leader)
	}
	ch <- prometheus.MustNewConstMetric(descReplicaLag, prometheus.GaugeValue, float64(lag))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
