package api

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rankwire/rankwire/hub"
)

// storeScrapeTimeout bounds the JetStream request of one scrape's store
// sizes: a scrape while JetStream does not answer reports none.
const storeScrapeTimeout = 2 * time.Second

// tenantCollector reports each open tenant's memory and store at scrape
// time. Memory is an estimate: the tenant's members, rows, profiles, held
// items and boards, each times its bytes measured by
// ledger.TestMemoryPerThing (hub.Usage). Store is the bytes JetStream
// reports for the tenant's stream (StreamInfo), one request for all.
type tenantCollector struct {
	hub          *hub.Hub
	memory, disk *prometheus.Desc
}

func newTenantCollector(h *hub.Hub) *tenantCollector {
	return &tenantCollector{
		hub: h,
		memory: prometheus.NewDesc("rankwire_tenant_memory_bytes",
			"Estimated heap the tenant's replica holds: members, rows of every window, profiles, held items and boards, each times its measured size.",
			[]string{"tenant"}, nil),
		disk: prometheus.NewDesc("rankwire_tenant_store_bytes",
			"Bytes of the tenant's stream as JetStream reports them (StreamInfo, on the stream's leader): the store it uses on each replica.",
			[]string{"tenant"}, nil),
	}
}

// Describe sends the descriptors.
func (c *tenantCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.memory
	ch <- c.disk
}

// Collect sends one sample of each per open tenant (store: where JetStream
// answered in time).
func (c *tenantCollector) Collect(ch chan<- prometheus.Metric) {
	for _, t := range c.hub.Stats() {
		if u, ok := c.hub.Quotas().Usage(t.Tenant); ok {
			ch <- prometheus.MustNewConstMetric(c.memory, prometheus.GaugeValue, float64(u.MemoryBytes), t.Tenant)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeScrapeTimeout)
	defer cancel()
	sizes, _ := c.hub.Quotas().StoreBytes(ctx) // none on error: the scrape goes on
	for tenant, n := range sizes {
		ch <- prometheus.MustNewConstMetric(c.disk, prometheus.GaugeValue, float64(n), tenant)
	}
}
