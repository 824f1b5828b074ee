package main

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rankwire/rankwire/webhook"
)

// backlogTimeout bounds one scrape's JetStream requests for the webhook
// backlog: a scrape while JetStream does not answer reports none.
const backlogTimeout = 2 * time.Second

// backlogDesc is each tenant's webhook backlog (Deliverer.Backlog).
var backlogDesc = prometheus.NewDesc("rankwire_webhook_backlog",
	"Notifications the tenant's webhook has not yet taken: waiting, and the one being delivered. Shared by the cluster: every gateway reports the same.",
	[]string{"tenant"}, nil)

// backlogCollector reports the webhook backlog at scrape time.
type backlogCollector struct{ d *webhook.Deliverer }

// Describe sends the descriptor.
func (c backlogCollector) Describe(ch chan<- *prometheus.Desc) { ch <- backlogDesc }

// Collect sends one sample per tenant with a webhook consumer, where
// JetStream answered within backlogTimeout.
func (c backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), backlogTimeout)
	defer cancel()
	backlog, _ := c.d.Backlog(ctx) // none on error: the scrape goes on
	for tenant, n := range backlog {
		ch <- prometheus.MustNewConstMetric(backlogDesc, prometheus.GaugeValue, float64(n), tenant)
	}
}
