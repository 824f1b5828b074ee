package hub

import (
	"fmt"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/notify"
)

// A quarantine flood of one tenant past its queue neither takes another
// tenant's notifications (every canary of b arrives, none dropped) nor
// loses its own: what did not fit is counted, derived again from the
// ledger, and each quarantine is stored exactly once.
func TestNotifyFloodIsolated(t *testing.T) {
	clk := newClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	// SyncLazy: this test is about the queues' isolation. Under the default
	// every notification's publish waits for its own fsync (notifications
	// are not group-committed), and 600 in a row on a loaded 2-core box
	// outlast waitNotes' 10 s.
	h := startHub(t, Config{Now: clk.now, Sync: SyncLazy})
	h.note.SetQueueCap(50)
	rules := Settings{Rules: &Rules{MaxScore: f64(1000)}}
	mustPut(t, h, "a", "cup", rules)
	mustPut(t, h, "b", "cup", rules)
	awaitTicks(t, h, 1)
	const flood, canaries = 600, 40
	cheats := func(prefix string, n int) []Item {
		items := make([]Item, n)
		for i := range items {
			items[i] = Item{Member: fmt.Sprintf("%s%d", prefix, i), Score: 1e9}
		}
		return items
	}
	for i := 0; i < canaries; i++ {
		if i%10 == 0 {
			mustSubmit(t, h, "a", "cup", cheats(fmt.Sprint("f", i, "-"), flood/4)...)
		}
		mustSubmit(t, h, "b", "cup", cheats(fmt.Sprint("canary", i, "-"), 1)...)
	}
	got := waitNotes(t, h, "b", canaries)
	all := waitNotes(t, h, "a", flood)
	awaitTicks(t, h, 3) // nothing more may come
	if got = notes(t, h, "b"); len(got) != canaries {
		t.Fatalf("b: %d notifications, want %d", len(got), canaries)
	}
	if all = notes(t, h, "a"); len(all) != flood {
		t.Fatalf("a: %d notifications, want %d", len(all), flood)
	}
	seen := map[string]bool{}
	for _, n := range all {
		if seen[n.ID] {
			t.Fatalf("a: %s stored twice", n.ID)
		}
		seen[n.ID] = true
	}
	var dropsA uint64
	for _, d := range h.Quotas().NotificationsDropped() {
		if d.Tenant != "a" || d.Reason != notify.DropBufferFull {
			t.Fatalf("dropped %+v: only a's buffer may overflow", d)
		}
		dropsA += d.Count
	}
	if dropsA == 0 {
		t.Fatal("a's flood overflowed nothing: the test does not test the overflow")
	}
}
