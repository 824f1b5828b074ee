package hub

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/notify"
)

// A tenant's notifications stop at its notification bytes: past them its
// quarantines' notifications are counted as dropped, not stored, while
// another tenant's all arrive; the notifier's accounting is the stream's
// own byte count to within a few bytes a message, and a node that starts
// later learns it from the stream.
func TestNotifyQuota(t *testing.T) {
	url := startNATS(t)
	clk := newClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	h := startHub(t, Config{Now: clk.now, NATSURL: url})
	const quota = 20_000
	h.Quotas().SetNotifyQuota(func(tenant string) int64 {
		if tenant == "a" {
			return quota
		}
		return 0 // the default
	})
	rules := Settings{Rules: &Rules{MaxScore: f64(1000)}}
	mustPut(t, h, "a", "cup", rules)
	awaitTicks(t, h, 1)
	items := make([]Item, 200)
	for i := range items {
		items[i] = Item{Member: fmt.Sprint("cheat", i), Score: 1e9}
	}
	mustSubmit(t, h, "a", "cup", items...)
	var dropped uint64
	checkFor(t, 10*time.Second, func() error {
		dropped = 0
		for _, d := range h.Quotas().NotificationsDropped() {
			dropped += d.Count
		}
		if stored := len(notes(t, h, "a")); uint64(stored)+dropped != 200 {
			return fmt.Errorf("%d stored and %d dropped of 200", stored, dropped)
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := h.js.Stream(ctx, notify.Stream)
	if err != nil {
		t.Fatal(err)
	}
	st := info.CachedInfo().State
	got := h.Quotas().NotifyBytes("a")
	t.Logf("a: %d notifications, %d bytes in the stream (%d a message), %d accounted, %d dropped",
		st.Msgs, st.Bytes, st.Bytes/st.Msgs, got, dropped)
	if dropped == 0 || st.Bytes < quota || st.Bytes > quota+st.Bytes/st.Msgs+64 {
		t.Fatalf("the stream holds %d bytes of a's, %d dropped: want the quota %d plus at most one", st.Bytes, dropped, quota)
	}
	if d := int64(st.Bytes) - got; d < -8*int64(st.Msgs) || d > 8*int64(st.Msgs) {
		t.Fatalf("accounted %d bytes, the stream holds %d", got, st.Bytes)
	}
	// A node started later seeds its count from the stream, then counts
	// what it publishes (before SetNotifyQuota it applies the default, and
	// may publish what h dropped): its count is the stream's.
	later := startHub(t, Config{Now: clk.now, NATSURL: url, DiscoverInterval: -1})
	awaitTicks(t, later, 2)
	info, err = h.js.Stream(ctx, notify.Stream)
	if err != nil {
		t.Fatal(err)
	}
	if st := info.CachedInfo().State; later.Quotas().NotifyBytes("a") != int64(st.Bytes) || st.Bytes < uint64(got) {
		t.Fatalf("a node started later accounts %d bytes, the stream holds %d", later.Quotas().NotifyBytes("a"), st.Bytes)
	}

	mustPut(t, h, "b", "cup", rules) // another tenant is not touched by a's quota
	mustSubmit(t, h, "b", "cup", items[:50]...)
	waitNotes(t, h, "b", 50)
}

// A notification stored with its names sealed (notify's Rankwire-Sealed
// header and "sealed" fields) is accounted at the stream's own size.
func TestNotifyBytesSealed(t *testing.T) {
	clk := newClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	h := startHub(t, Config{Now: clk.now})
	mustPut(t, h, "a", "cup", Settings{EndsAt: "2026-12-01T11:00:00Z"})
	mustSubmit(t, h, "a", "cup", Item{Member: "p1", Score: 2}, Item{Member: "p2", Score: 1})
	if _, err := h.PutProfile(testCtx(t), "a", "p1", Profile{Name: "Sealed Name"}); err != nil {
		t.Fatal(err)
	}
	clk.set(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	if n := waitNotes(t, h, "a", 1); n[0].Rows[0].Name != "Sealed Name" {
		t.Fatalf("board.ended shows %+v", n[0].Rows)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := h.js.Stream(ctx, notify.Stream)
	if err != nil {
		t.Fatal(err)
	}
	if st, got := info.CachedInfo().State, h.Quotas().NotifyBytes("a"); st.Msgs != 1 || int64(st.Bytes) != got {
		t.Fatalf("accounted %d bytes, the stream holds %d in %d messages", got, st.Bytes, st.Msgs)
	}
}
