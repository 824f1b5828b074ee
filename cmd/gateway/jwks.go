package main

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rankwire/rankwire/auth"
)

// watchJWKS runs v's key-set refresher (auth.Verifier.RunJWKS) until the
// returned stop is called, and exports what it knows of each tenant's set.
// It does nothing while the key file names no jwks_url but the refresher
// still runs, so that a reload that adds one is fetched at once.
func watchJWKS(ctx context.Context, v *auth.Verifier, reg *prometheus.Registry) (stop func()) {
	reg.MustRegister(jwksCollector{v})
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { v.RunJWKS(ctx) })
	return func() { cancel(); wg.Wait() }
}

var (
	jwksKeysDesc = prometheus.NewDesc("rankwire_jwks_keys",
		"Keys in use from the tenant's JSON Web Key Set (jwks_url in the key file).", []string{"tenant"}, nil)
	jwksSuccessDesc = prometheus.NewDesc("rankwire_jwks_last_success_timestamp_seconds",
		"When the tenant's key set was last fetched successfully (Unix time; 0 never).", []string{"tenant"}, nil)
	jwksStaleDesc = prometheus.NewDesc("rankwire_jwks_stale",
		"1 while the last fetch of the tenant's key set failed: the keys of an older fetch verify.", []string{"tenant"}, nil)
)

// jwksCollector reads the Verifier's key-set status at each scrape.
type jwksCollector struct{ v *auth.Verifier }

func (c jwksCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jwksKeysDesc
	ch <- jwksSuccessDesc
	ch <- jwksStaleDesc
}

func (c jwksCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.v.JWKSStatus() {
		stale, success := 0.0, 0.0
		if s.Stale() {
			stale = 1
		}
		if !s.LastSuccess.IsZero() {
			success = float64(s.LastSuccess.UnixNano()) / 1e9
		}
		ch <- prometheus.MustNewConstMetric(jwksKeysDesc, prometheus.GaugeValue, float64(s.Keys), s.Tenant)
		ch <- prometheus.MustNewConstMetric(jwksSuccessDesc, prometheus.GaugeValue, success, s.Tenant)
		ch <- prometheus.MustNewConstMetric(jwksStaleDesc, prometheus.GaugeValue, stale, s.Tenant)
	}
}
