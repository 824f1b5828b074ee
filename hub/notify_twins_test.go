package hub

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/notify"
)

// twinScenario runs the same tournament on every tenant of tenants, with
// identical names for everything (board, windows, rules, ends_at, members,
// quarantine ids), through two quarantines, a day's close and the board's
// end, published by two nodes, and returns each tenant's stored
// notifications.
func twinScenario(t *testing.T, tenants ...string) map[string][]Notification {
	t.Helper()
	url := startNATS(t)
	clk := newClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	h := startHub(t, Config{Now: clk.now, NATSURL: url})
	other := startHub(t, Config{Now: clk.now, NATSURL: url, DiscoverInterval: -1})
	for _, tn := range tenants {
		mustPut(t, h, tn, "weekly", Settings{Windows: []string{"all", "day"}, EndsAt: "2026-12-02T12:00:00Z",
			Prizes: []Prize{{From: 1, To: 1, Prize: "€100"}}, Rules: &Rules{MaxScore: f64(1000)}})
		mustSubmit(t, h, tn, "weekly", Item{Member: "p1", Score: 50}, Item{Member: "p2", Score: 70},
			Item{Member: "cheat", Score: 1e9}, Item{Member: "cheat", Score: 2e9})
		if _, err := other.replica(testCtx(t), tn, false); err != nil { // a second node publishing the same
			t.Fatal(err)
		}
	}
	step := func(at time.Time, want int) {
		t.Helper()
		clk.set(at)
		for _, tn := range tenants {
			waitNotes(t, h, tn, want)
		}
	}
	step(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), 2) // the quarantines
	step(time.Date(2026, 12, 2, 0, 1, 10, 0, time.UTC), 3) // the day's close, final
	step(time.Date(2026, 12, 2, 12, 1, 5, 0, time.UTC), 4) // the board's end, final
	awaitTicks(t, h, 2)                                    // both nodes pass again: nothing more may be stored
	awaitTicks(t, other, 2)
	out := map[string][]Notification{}
	for _, tn := range tenants {
		out[tn] = notes(t, h, tn)
	}
	return out
}

// Two tenants with identical names for everything each get exactly the
// notifications they get alone, with the same ids: a notification's id is
// unique per tenant, and one tenant's never stands for another's (before
// DedupID the stream's deduplication, keyed on the bare id, stored only the
// first tenant's of each).
func TestTwinTenantsNotifications(t *testing.T) {
	alone := twinScenario(t, "casino-a")["casino-a"]
	if len(alone) != 4 {
		t.Fatalf("alone: %d notifications, want 4: %+v", len(alone), alone)
	}
	twins := twinScenario(t, "casino-a", "casino-b")
	for _, tn := range []string{"casino-a", "casino-b"} {
		got := twins[tn]
		if len(got) != len(alone) {
			t.Fatalf("%s: %d notifications, want %d alone: %+v", tn, len(got), len(alone), got)
		}
		for i, n := range got {
			if n.Tenant != tn {
				t.Fatalf("%s got another tenant's notification: %+v", tn, n)
			}
			want := alone[i]
			want.Tenant = tn
			if !reflect.DeepEqual(n, want) {
				t.Fatalf("%s notification %d:\n got %+v\nwant %+v", tn, i, n, want)
			}
		}
	}
	if got := fmt.Sprint(ids(twins["casino-b"])); got != fmt.Sprint(ids(alone)) {
		t.Fatalf("ids %s, want %s", got, fmt.Sprint(ids(alone)))
	}
}

func ids(ns []Notification) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.ID
	}
	return out
}

// Across the upgrade to tenant-qualified message ids, a notification a
// node stored under its bare id before the upgrade is not stored again by
// an upgraded node (it seeds what the stream holds), while another
// tenant's notification with the same id, which the old deduplication
// would have dropped, is stored.
func TestNotifyUpgradeFromBareIDs(t *testing.T) {
	url := startNATS(t)
	clk := newClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	old := startHub(t, Config{Now: clk.now, NATSURL: url})
	for _, tn := range []string{"t1", "t2"} {
		mustPut(t, old, tn, "cup", Settings{EndsAt: "2026-12-01T12:00:00Z"})
	}
	awaitTicks(t, old, 1) // the stream exists
	// What a node before the upgrade stored: t1's end under its bare id.
	ends := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	bare := fmt.Sprintf("board.ended:cup:%d", ends)
	msg := nats.NewMsg(notify.Subject("t1"))
	msg.Data = []byte(`{"id":"` + bare + `","type":"board.ended","tenant":"t1","board":"cup"}`)
	msg.Header.Set(jetstream.MsgIDHeader, bare)
	if _, err := old.js.PublishMsg(testCtx(t), msg); err != nil {
		t.Fatal(err)
	}
	old.Close()

	h := startHub(t, Config{Now: clk.now, NATSURL: url, DiscoverInterval: -1})
	for _, tn := range []string{"t1", "t2"} {
		if _, err := h.replica(testCtx(t), tn, false); err != nil {
			t.Fatal(err)
		}
	}
	awaitTicks(t, h, 1) // seeded
	clk.set(time.Date(2026, 12, 1, 12, 1, 5, 0, time.UTC))
	got := waitNotes(t, h, "t2", 1)
	awaitTicks(t, h, 2)
	if got = notes(t, h, "t2"); len(got) != 1 || got[0].ID != bare {
		t.Fatalf("t2: %+v, want its board.ended", got)
	}
	if got = notes(t, h, "t1"); len(got) != 1 || got[0].Total != 0 {
		t.Fatalf("t1: %+v, want only the one stored before the upgrade", got)
	}
}
