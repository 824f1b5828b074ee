package api

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rankwire/rankwire/hub"
)

// natsCollector reports the hub's NATS connection and publishes at scrape
// time (hub.NATS, atomic loads only), and the tenants that are not
// writable: those whose stream could not be opened, and the open ones
// whose writes fail fast (hubCollector's rankwire_tenant_writable).
type natsCollector struct {
	hub                                                    *hub.Hub
	connected, disconnects, reconnects, errs, retries, lat *prometheus.Desc
	down                                                   *prometheus.Desc
	resets, applyTimeouts, leaders, quorumLost             *prometheus.Desc
	raftCompactFailures                                    *prometheus.Desc
}

func newNATSCollector(h *hub.Hub) *natsCollector {
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	return &natsCollector{
		hub:           h,
		connected:     d("rankwire_nats_connected", "1 while the gateway's NATS connection is up, else 0."),
		disconnects:   d("rankwire_nats_disconnects_total", "Times the NATS connection was lost."),
		reconnects:    d("rankwire_nats_reconnects_total", "Times the NATS connection came back."),
		errs:          d("rankwire_publish_errors_total", "Writes whose publish to JetStream failed after its retries (answered 503: outcome unknown)."),
		retries:       d("rankwire_publish_retries_total", "Publish attempts beyond each write's first (a leader change, a timeout, no responders)."),
		lat:           d("rankwire_publish_duration_seconds", "Time from a write's first publish attempt to JetStream's ack or the final failure, retries included."),
		down:          d("rankwire_tenants_unavailable", "Tenants whose stream is listed but could not be opened; retried in the background."),
		resets:        d("rankwire_replica_consumer_resets_total", "Replicas' stream consumers replaced because they failed or stalled (a server died, a leader changed)."),
		leaders:       d("rankwire_nats_stream_leader_changes_total", "Leader elections JetStream announced for tenant streams (a failover, a restart; clusters only)."),
		quorumLost:    d("rankwire_nats_stream_quorum_lost_total", "JetStream's quorum-lost advisories for tenant streams: a replica lost its leader (sent at every election too; a lost majority where no election follows)."),
		applyTimeouts: d("rankwire_apply_timeouts_total", "Writes JetStream stored that answered 503 because this node did not apply them within the write timeout."),
		raftCompactFailures: d("rankwire_raft_compact_failures_total",
			"Streams whose Raft log, holding data an erasure removed, this node could not compact within 30 s (left to JetStream's own compaction; clusters only)."),
	}
}

// Describe sends the descriptors.
func (c *natsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.connected, c.disconnects, c.reconnects, c.errs, c.retries, c.lat, c.down, c.resets, c.applyTimeouts, c.leaders, c.quorumLost, c.raftCompactFailures} {
		ch <- d
	}
}

// Collect sends one sample of each. Cost: O(histogram buckets).
func (c *natsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.hub.NATS()
	up := 0.0
	if s.Connected {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(c.connected, prometheus.GaugeValue, up)
	ch <- prometheus.MustNewConstMetric(c.disconnects, prometheus.CounterValue, float64(s.Disconnects))
	ch <- prometheus.MustNewConstMetric(c.reconnects, prometheus.CounterValue, float64(s.Reconnects))
	ch <- prometheus.MustNewConstMetric(c.errs, prometheus.CounterValue, float64(s.PublishErrors))
	ch <- prometheus.MustNewConstMetric(c.retries, prometheus.CounterValue, float64(s.Retries))
	buckets := make(map[float64]uint64, len(hub.PublishBuckets))
	for i, le := range hub.PublishBuckets {
		buckets[le] = s.LatencyCounts[i]
	}
	ch <- prometheus.MustNewConstHistogram(c.lat, s.Publishes, s.LatencySum.Seconds(), buckets)
	ch <- prometheus.MustNewConstMetric(c.down, prometheus.GaugeValue, float64(c.hub.DownTenants()))
	ch <- prometheus.MustNewConstMetric(c.resets, prometheus.CounterValue, float64(s.ConsumerResets))
	ch <- prometheus.MustNewConstMetric(c.applyTimeouts, prometheus.CounterValue, float64(s.ApplyTimeouts))
	ch <- prometheus.MustNewConstMetric(c.leaders, prometheus.CounterValue, float64(s.LeaderChanges))
	ch <- prometheus.MustNewConstMetric(c.quorumLost, prometheus.CounterValue, float64(s.QuorumLost))
	ch <- prometheus.MustNewConstMetric(c.raftCompactFailures, prometheus.CounterValue, float64(s.RaftCompactFailures))
}
