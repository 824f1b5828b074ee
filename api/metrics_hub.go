package api

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rankwire/rankwire/hub"
)

// hubCollector reports the replicas' state at scrape time: board sizes,
// the last applied stream sequence and the apply lag per tenant.
type hubCollector struct {
	hub                             *hub.Hub
	members, applied, lag, writable *prometheus.Desc
	notifyDropped                   *prometheus.Desc
}

func newHubCollector(h *hub.Hub) *hubCollector {
	return &hubCollector{
		hub: h,
		members: prometheus.NewDesc("rankwire_board_members",
			"Members in the current primary window of each board.", []string{"tenant", "board"}, nil),
		applied: prometheus.NewDesc("rankwire_applied_sequence",
			"Stream sequence of the last event the tenant's replica applied.", []string{"tenant"}, nil),
		lag: prometheus.NewDesc("rankwire_apply_lag_seconds",
			"Time from the last applied event's storing in JetStream to its apply.", []string{"tenant"}, nil),
		writable: prometheus.NewDesc("rankwire_tenant_writable",
			"0 while the tenant's writes fail fast (its last write failed after the whole --write-timeout), else 1.", []string{"tenant"}, nil),
		notifyDropped: prometheus.NewDesc("rankwire_notifications_dropped_total",
			"Notifications not queued or not published, by tenant and reason (buffer_full: derived again from the ledger later; quota: the tenant's notification_bytes was full; queue_full: a standings.amended found its tenant's queue full).",
			[]string{"tenant", "reason"}, nil),
	}
}

// Describe sends the descriptors. Collect sends one sample per tenant and board.
func (c *hubCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.members
	ch <- c.applied
	ch <- c.lag
	ch <- c.writable
	ch <- c.notifyDropped
}

func (c *hubCollector) Collect(ch chan<- prometheus.Metric) {
	for _, t := range c.hub.Stats() {
		ch <- prometheus.MustNewConstMetric(c.applied, prometheus.GaugeValue, float64(t.Applied), t.Tenant)
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, t.ApplyLag.Seconds(), t.Tenant)
		ch <- prometheus.MustNewConstMetric(c.writable, prometheus.GaugeValue, b2f(t.Writable), t.Tenant)
		for _, b := range t.Boards {
			ch <- prometheus.MustNewConstMetric(c.members, prometheus.GaugeValue, float64(b.Members), t.Tenant, b.Name)
		}
	}
	for _, d := range c.hub.Quotas().NotificationsDropped() {
		ch <- prometheus.MustNewConstMetric(c.notifyDropped, prometheus.CounterValue, float64(d.Count), d.Tenant, d.Reason)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
