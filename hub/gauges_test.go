package hub

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestGauges: a tenant's snapshot age restarts when a snapshot is written,
// its held items are counted, another tenant's are its own, and the store
// reports its use under its limit.
func TestGauges(t *testing.T) {
	h := startHub(t, Config{SnapshotEvery: 1, MaxStore: 64 << 20})
	max := 10.0
	mustPut(t, h, "t1", "b", Settings{Rules: &Rules{MaxScore: &max}})
	mustPut(t, h, "t2", "b", Settings{})
	written := time.Now() // both tenants opened before this
	mustSubmit(t, h, "t1", "b", Item{Member: "a", Score: 1e6}, Item{Member: "c", Score: 1e6})
	gauges := func() map[string]TenantGauges {
		out := map[string]TenantGauges{}
		for _, g := range h.Quotas().Gauges() {
			out[g.Tenant] = g
		}
		return out
	}
	checkFor(t, 5*time.Second, func() error {
		if g := gauges()["t1"]; g.SnapshotAge > time.Since(written) {
			return fmt.Errorf("t1's snapshot age %v: no snapshot written since the submit %v ago", g.SnapshotAge, time.Since(written))
		}
		return nil
	})
	g := gauges()
	if g["t1"].Held != 2 || g["t2"].Held != 0 || g["t2"].SnapshotAge <= 0 {
		t.Fatalf("gauges %+v: want t1 holding 2, t2 none and an age", g)
	}
	use, err := h.Quotas().StoreUse(context.Background())
	if err != nil || use.Used == 0 || use.Limit != 64<<20 {
		t.Fatalf("store use %+v, %v: want some bytes of a 64 MiB limit", use, err)
	}
}
