package webhook

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/notify"
)

// TestBacklog: a tenant whose webhook refuses has its notifications as
// backlog, another tenant's taken ones are not counted against it, and the
// backlog empties once the webhook takes them.
func TestBacklog(t *testing.T) {
	down, up := &receiver{t: t, tries: map[string]int{}}, &receiver{t: t, tries: map[string]int{}}
	down.failing.Store(true)
	srvDown, srvUp := httptest.NewServer(down), httptest.NewServer(up)
	defer srvDown.Close()
	defer srvUp.Close()
	h := startHub(t, t.TempDir())
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	max := 10.0
	for _, tenant := range []string{"t1", "t2"} {
		if _, err := h.PutBoard(ctx, tenant, "cup", hub.Settings{Rules: &hub.Rules{MaxScore: &max}}); err != nil {
			t.Fatal(err)
		}
	}
	hooks := func() map[string]Hook {
		return map[string]Hook{"t1": {URL: srvDown.URL, Secret: secret}, "t2": {URL: srvUp.URL, Secret: secret}}
	}
	fast := func(int) time.Duration { return 20 * time.Millisecond }
	d := Start(Config{JS: h.JetStream(), Keys: h.Privacy().Keys(), Hooks: hooks, Backoff: fast, Resync: 50 * time.Millisecond, Allow: loopbackAllowed(t)})
	defer d.Close()
	for _, tenant := range []string{"t1", "t2"} {
		await.For(t, 10*time.Second, func() error {
			_, err := h.JetStream().Consumer(ctx, notify.Stream, consumerName(tenant))
			return err
		})
	}
	quarantine(t, h, "a", "b", "c")
	if _, err := h.Submit(ctx, "t2", "cup", []hub.Item{{Member: "other", Score: 1e9}}); err != nil {
		t.Fatal(err)
	}
	backlog := func(want1, want2 uint64) func() error {
		return func() error {
			got, err := d.Backlog(ctx)
			if err != nil {
				return err
			}
			if n1, ok1 := got["t1"]; !ok1 || n1 != want1 || got["t2"] != want2 {
				return fmt.Errorf("backlog %v, want t1 %d, t2 %d", got, want1, want2)
			}
			return nil
		}
	}
	await.For(t, 10*time.Second, func() error {
		if took := up.taken(); len(took) != 1 {
			return fmt.Errorf("t2's webhook took %v, want its one notification", took)
		}
		return backlog(3, 0)()
	})
	down.failing.Store(false)
	await.For(t, 10*time.Second, backlog(0, 0))
}
