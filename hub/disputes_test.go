package hub

import (
	"testing"
	"time"
)

// An amendment publishes one standings.amended notification with the
// amended rows and prizes; a failed one publishes none.
func TestAmendedNotification(t *testing.T) {
	url := startNATS(t)
	clk := newClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	h := startHub(t, Config{Now: clk.now, NATSURL: url})
	mustPut(t, h, "t1", "cup", Settings{EndsAt: "2026-12-02T12:00:00Z",
		Prizes: []Prize{{From: 1, To: 1, Prize: "€100"}, {From: 2, To: 2, Prize: "€50"}}})
	mustSubmit(t, h, "t1", "cup", Item{Member: "p1", Score: 50}, Item{Member: "p2", Score: 70})
	ctx := testCtx(t)
	if _, err := h.Disputes().Reinstate(ctx, "t1", Amendment{Board: "cup", Member: "p2", Reason: "none"}); err == nil {
		t.Fatal("reinstated a member never disqualified")
	}
	act, err := h.Disputes().Disqualify(ctx, "t1", Amendment{Board: "cup", Member: "p2", Reason: "bot", Sub: "ops"})
	if err != nil || act.Revision != 1 || act.Member != "p2" || act.Sub != "ops" {
		t.Fatalf("disqualify: %+v %v", act, err)
	}
	got := waitNotes(t, h, "t1", 1)
	n := got[0]
	if n.Type != "standings.amended" || n.Member != "p2" || n.Reason != "disqualify: bot" || n.Total != 1 ||
		len(n.Rows) != 1 || n.Rows[0].Member != "p1" || n.Rows[0].Prize != "€100" || n.Tenant != "t1" {
		t.Fatalf("standings.amended: %+v", n)
	}
	awaitTicks(t, h, 2)
	if got := notes(t, h, "t1"); len(got) != 1 {
		t.Fatalf("notifications: %+v", got)
	}
}
