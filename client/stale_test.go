package client_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/client"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/live"
)

// A Watch leaves a gateway whose heartbeat says it is stale (its replica
// trails past its bound) for the next one, and resumes there without a
// gap, long before any read timeout. Both gateways share one NATS, so the
// "stale" one is stale only by what it says.
func TestWatchLeavesAStaleGateway(t *testing.T) {
	nats := startNATS(t)
	var stale atomic.Bool
	status := func(tenant string) (bool, bool) { return true, tenant == "t1" && stale.Load() }
	beat := live.Options{HeartbeatInterval: 100 * time.Millisecond}
	withStatus := beat
	withStatus.Status = status
	a := startGatewayWith(t, nats, withStatus)
	b := startGatewayWith(t, nats, beat)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := b.client(t, "t1", "k1", auth.RoleAdmin)
	if _, err := admin.PutBoard(ctx, "s", client.Settings{Policy: "sum"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Submit(ctx, "s", client.Score{Member: "a", Score: 1}); err != nil {
		t.Fatal(err)
	}
	awaitScore(t, a, "a", 1) // a has applied the board and its first score
	pa, pb := startProxy(t, a.Addr), startProxy(t, b.Addr)
	reader := newClient(t, a, pa.URL(), pb.URL())
	w := startWatcher(ctx, t, reader, client.WatchReadTimeout(30*time.Second), client.WatchBackoff(20*time.Millisecond, 200*time.Millisecond))
	w.waitTop("the first state, through a", "a")
	if n := pb.accepted.Load(); n != 0 {
		t.Fatalf("%d connections to b while a is fresh", n)
	}
	stale.Store(true)
	t0 := time.Now()
	await.For(t, 10*time.Second, func() error {
		if pb.accepted.Load() == 0 {
			return fmt.Errorf("no connection to b yet")
		}
		return nil
	})
	t.Logf("the watch left the stale gateway after %v", time.Since(t0).Round(time.Millisecond))
	if el := time.Since(t0); el > slack {
		t.Errorf("the watch left after %v, want under %v (the read timeout is 30 s)", el, slack)
	}
	if _, err := admin.Submit(ctx, "s", client.Score{Member: "b", Score: 2}); err != nil {
		t.Fatal(err)
	}
	w.waitTop("b on top, through b", "b")
	for i := 1; i < len(w.seqs); i++ {
		if w.seqs[i] <= w.seqs[i-1] {
			t.Fatalf("seqs out of order: %v", w.seqs)
		}
	}
}
