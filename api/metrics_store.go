package api

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rankwire/rankwire/hub"
)

// warnCollector reports what warns before trouble, at scrape time: the
// store's bytes against its limit (so an alert can predict it filling), and
// per tenant its items held in quarantine and its snapshot's age.
type warnCollector struct {
	hub                         *hub.Hub
	used, limit, held, snapshot *prometheus.Desc
}

func newWarnCollector(h *hub.Hub) *warnCollector {
	return &warnCollector{
		hub: h,
		used: prometheus.NewDesc("rankwire_store_used_bytes",
			"Bytes JetStream stores: the embedded server's, or the account's on an external one.", nil, nil),
		limit: prometheus.NewDesc("rankwire_store_limit_bytes",
			"The store's limit writes are refused at (--max-store, or the account's max store); absent where none is set.", nil, nil),
		held: prometheus.NewDesc("rankwire_quarantine_pending",
			"Items held in quarantine on all the tenant's boards, awaiting approve or reject.", []string{"tenant"}, nil),
		snapshot: prometheus.NewDesc("rankwire_snapshot_age_seconds",
			"Seconds since this node last wrote the tenant's snapshot (or opened the tenant): a restart replays the events since.", []string{"tenant"}, nil),
	}
}

// Describe sends the descriptors.
func (c *warnCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.used
	ch <- c.limit
	ch <- c.held
	ch <- c.snapshot
}

// Collect sends the store's use where JetStream answered in time
// (storeScrapeTimeout), and one sample of each per open tenant.
func (c *warnCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), storeScrapeTimeout)
	defer cancel()
	if u, err := c.hub.Quotas().StoreUse(ctx); err == nil { // none on error: the scrape goes on
		ch <- prometheus.MustNewConstMetric(c.used, prometheus.GaugeValue, float64(u.Used))
		if u.Limit > 0 {
			ch <- prometheus.MustNewConstMetric(c.limit, prometheus.GaugeValue, float64(u.Limit))
		}
	}
	for _, g := range c.hub.Quotas().Gauges() {
		ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(g.Held), g.Tenant)
		ch <- prometheus.MustNewConstMetric(c.snapshot, prometheus.GaugeValue, g.SnapshotAge.Seconds(), g.Tenant)
	}
}
