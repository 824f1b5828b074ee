package webhook

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/notify"
)

// Two tenants with identical names for everything (board, rules, ends_at,
// members, quarantine ids) each receive on their webhook exactly the
// deliveries of their own notifications, one per notification, with the
// webhook-id the notification's id: what a tenant alone receives. Before
// message ids carried the tenant, the second tenant's were never stored.
func TestTwinTenantsDeliveries(t *testing.T) {
	var clock atomicTime
	clock.set(time.Now().UTC().Truncate(time.Second))
	ends := clock.now().Add(time.Hour)
	tenants := []string{"casino-a", "casino-b"}
	rcs := map[string]*receiver{}
	handlers := map[string]http.Handler{}
	for _, tn := range tenants {
		rc := &receiver{t: t, tries: map[string]int{}}
		rcs[tn], handlers[tn] = rc, rc
	}
	ctx, h := startTwins(t, &clock, handlers)
	max := 10.0
	for _, tn := range tenants {
		putWeekly(t, ctx, h, tn, hub.Settings{EndsAt: ends.Format(time.RFC3339), Rules: &hub.Rules{MaxScore: &max}})
		if _, err := h.Submit(ctx, tn, "weekly", []hub.Item{{Member: "p1", Score: 5}, {Member: "cheat", Score: 1e9}, {Member: "cheat", Score: 2e9}}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"submission.quarantined:weekly:1", "submission.quarantined:weekly:2",
		fmt.Sprintf("board.ended:weekly:%d", ends.UnixMilli())}
	took := func(n int) {
		t.Helper()
		for _, tn := range tenants {
			rc := rcs[tn]
			await.For(t, 15*time.Second, func() error {
				if got := rc.taken(); len(got) < n {
					return fmt.Errorf("%s took %v", tn, got)
				}
				return nil
			})
		}
	}
	took(2)                              // the quarantines
	clock.set(ends.Add(2 * time.Minute)) // the end, final
	took(3)
	for _, tn := range tenants {
		rc := rcs[tn]
		rc.mu.Lock()
		bad := slices.Clone(rc.bad)
		rc.mu.Unlock()
		if got := rc.taken(); !slices.Equal(got, want) || len(bad) != 0 {
			t.Fatalf("%s took %v, want %v; bad requests %v", tn, got, want, bad)
		}
	}
}

// startTwins starts a hub on clock and a deliverer that sends each
// tenant's notifications to its handler in receivers. The hub, the
// receivers' servers and the deliverer stop at the test's end, then ctx
// (30s) is cancelled.
func startTwins(t *testing.T, clock *atomicTime, receivers map[string]http.Handler) (context.Context, *hub.Hub) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	h, err := hub.Start(ctx, hub.Config{DataDir: t.TempDir(), Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	hooks := map[string]Hook{}
	for tn, rc := range receivers {
		srv := httptest.NewServer(rc)
		t.Cleanup(srv.Close)
		hooks[tn] = Hook{URL: srv.URL, Secret: secret}
	}
	d := Start(Config{JS: h.JetStream(), Keys: h.Privacy().Keys(), Hooks: func() map[string]Hook { return hooks }, Resync: 50 * time.Millisecond, Allow: loopbackAllowed(t)})
	t.Cleanup(d.Close)
	return ctx, h
}

// putWeekly puts tn's board weekly with s and waits until the tenant's
// delivery has begun: nothing published later is missed.
func putWeekly(t *testing.T, ctx context.Context, h *hub.Hub, tn string, s hub.Settings) {
	t.Helper()
	if _, err := h.PutBoard(ctx, tn, "weekly", s); err != nil {
		t.Fatal(err)
	}
	await.For(t, 10*time.Second, func() error {
		_, err := h.JetStream().Consumer(ctx, notify.Stream, consumerName(tn))
		return err
	})
}

// atomicTime is a settable hub.Config.Now.
type atomicTime struct{ ms atomic.Int64 }

func (c *atomicTime) set(t time.Time) { c.ms.Store(t.UnixMilli()) }
func (c *atomicTime) now() time.Time  { return time.UnixMilli(c.ms.Load()).UTC() }
