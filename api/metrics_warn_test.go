package api

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestWarnMetrics: the store's use and limit, and each tenant's held items
// and snapshot age are exported with sane values, and a second tenant's
// series are its own.
func TestWarnMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, Config{Registry: reg})
	a, b := e.token("a", admin), e.token("b", admin)
	e.must(200, "PUT", "/v1/boards/q", a, `{"rules":{"max_score":100}}`)
	e.must(200, "POST", "/v1/boards/q/scores", a,
		`{"scores":[{"member":"p1","score":50},{"member":"p2","score":500},{"member":"p3","score":700}]}`)
	e.must(200, "PUT", "/v1/boards/q", b, `{"rules":{"max_score":100}}`)
	e.must(200, "POST", "/v1/boards/q/scores", b, `{"scores":[{"member":"p1","score":5000}]}`)

	got := gatherGauges(t, reg)
	used, limit := got["rankwire_store_used_bytes|"], got["rankwire_store_limit_bytes|"]
	if used <= 0 || limit < used {
		t.Errorf("store: %v of %v bytes: want some bytes used, under the limit", used, limit)
	}
	if a, b := got["rankwire_quarantine_pending|casino-a"], got["rankwire_quarantine_pending|casino-b"]; a != 2 || b != 1 {
		t.Errorf("held: casino-a %v, casino-b %v: want 2 and 1", a, b)
	}
	for _, tenant := range []string{"casino-a", "casino-b"} {
		age, ok := got["rankwire_snapshot_age_seconds|"+tenant]
		if !ok || age < 0 || age > 60 {
			t.Errorf("snapshot age of %s: %v (present %v): want 0 to 60 s since it opened", tenant, age, ok)
		}
	}
}

// gatherGauges scrapes reg's gauges into "name|label values" → value.
func gatherGauges(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			key := f.GetName() + "|"
			for i, l := range m.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += l.GetValue()
			}
			if g := m.GetGauge(); g != nil {
				out[key] = g.GetValue()
			}
		}
	}
	return out
}
