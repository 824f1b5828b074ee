package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/notify"
)

// notes reads every notification stored for tenant, in stream order.
func notes(t *testing.T, h *Hub, tenant string) []Notification {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := h.js.OrderedConsumer(ctx, notify.Stream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{notify.Subject(tenant)}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := h.js.Stream(ctx, notify.Stream)
	if err != nil {
		t.Fatal(err)
	}
	var out []Notification
	if info.CachedInfo().State.Msgs == 0 {
		return nil
	}
	batch, err := c.FetchNoWait(1000)
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		var n Notification
		data, err := notify.Body(ctx, h.Privacy().Keys(), tenant, m.Headers(), m.Data())
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// waitNotes waits until tenant has n notifications stored and returns them.
func waitNotes(t *testing.T, h *Hub, tenant string, n int) []Notification {
	t.Helper()
	var got []Notification
	checkFor(t, 10*time.Second, func() error {
		if got = notes(t, h, tenant); len(got) < n {
			return fmt.Errorf("%d notifications, want %d", len(got), n)
		}
		return nil
	})
	return got
}

// awaitTicks waits until h's notifier has made n more passes.
func awaitTicks(t *testing.T, h *Hub, n uint64) {
	t.Helper()
	want := h.note.Passes() + n
	checkFor(t, 10*time.Second, func() error {
		if got := h.note.Passes(); got < want {
			return fmt.Errorf("%d notifier passes, want %d", got, want)
		}
		return nil
	})
}

// A quarantine, a day's close and a board's end each give one notification
// with the final rows and prizes, stored once however many nodes publish
// it; another tenant's subject gets none of them.
func TestNotifications(t *testing.T) {
	url := startNATS(t)
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clk := newClock(start)
	h := startHub(t, Config{Now: clk.now, NATSURL: url})
	other := startHub(t, Config{Now: clk.now, NATSURL: url, DiscoverInterval: -1})
	mustPut(t, h, "t1", "cup", Settings{Windows: []string{"all", "day"}, EndsAt: "2026-12-02T12:00:00Z",
		Prizes: []Prize{{From: 1, To: 1, Prize: "€100"}}, Rules: &Rules{MaxScore: f64(1000)}})
	mustPut(t, h, "t2", "cup", Settings{})
	mustSubmit(t, h, "t1", "cup", Item{Member: "p1", Score: 50}, Item{Member: "p2", Score: 70}, Item{Member: "cheat", Score: 1e9})
	if _, err := other.replica(testCtx(t), "t1", false); err != nil { // a second node publishing the same
		t.Fatal(err)
	}
	got := waitNotes(t, h, "t1", 1)
	q := got[0]
	if q.Type != "submission.quarantined" || q.Member != "cheat" || q.Reason != "max_score" || q.QID != "1" ||
		q.ID != "submission.quarantined:cup:1" || q.At != "2026-12-01T10:00:00.000Z" {
		t.Fatalf("the quarantine's notification: %+v", q)
	}

	clk.set(time.Date(2026, 12, 2, 0, 0, 30, 0, time.UTC)) // the day closed, but not ledger.FinalAfter ago
	mustSubmit(t, h, "t1", "cup", Item{Member: "p3", Score: 10})
	awaitTicks(t, h, 2) // two passes that saw the day closed but not final
	if got := notes(t, h, "t1"); len(got) != 1 {
		t.Fatalf("the day's close went out before it was final: %+v", got)
	}
	clk.set(time.Date(2026, 12, 2, 0, 1, 10, 0, time.UTC))
	got = waitNotes(t, h, "t1", 2)
	d := got[1]
	if d.Type != "window.closed" || d.Window != "day:2026-12-01" || d.Total != 2 || len(d.Rows) != 2 ||
		d.Rows[0].Member != "p2" || d.Rows[0].Prize != "€100" || d.Rows[1].Prize != "" || d.At != "2026-12-02T00:00:00.000Z" {
		t.Fatalf("the day's close: %+v", d)
	}

	clk.set(time.Date(2026, 12, 2, 12, 1, 5, 0, time.UTC)) // the end plus ledger.FinalAfter
	got = waitNotes(t, h, "t1", 3)
	e := got[2]
	if e.Type != "board.ended" || e.Window != "all" || e.Total != 3 || e.Rows[0].Member != "p2" || e.Rows[0].Prize != "€100" ||
		e.ID != "board.ended:cup:1796212800000" {
		t.Fatalf("the board's end: %+v", e)
	}
	awaitTicks(t, h, 2) // both nodes pass again: nothing more may be stored
	awaitTicks(t, other, 2)
	if got := notes(t, h, "t1"); len(got) != 3 {
		t.Fatalf("%d notifications stored, want 3 (two nodes publish each): %+v", len(got), got)
	}
	if got := notes(t, h, "t2"); len(got) != 0 {
		t.Fatalf("another tenant got %+v", got)
	}
}

// The notifier visits a tenant (its read lock, the ledger's walk of its
// boards) when it opens, when its schedule moves (settings, a deletion)
// and when its next due comes, never on a tick with nothing due: a
// submission moves nothing.
func TestNotifierVisitsOnlyWhatIsDue(t *testing.T) {
	clk := newClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	h := startHub(t, Config{Now: clk.now})
	mustPut(t, h, "t1", "cup", Settings{Windows: []string{"all", "day"}})
	awaitTicks(t, h, 2)
	before := h.note.Visits()
	mustSubmit(t, h, "t1", "cup", Item{Member: "p1", Score: 50})
	awaitTicks(t, h, 3)
	if got := h.note.Visits(); got != before {
		t.Fatalf("%d visits after a submission and three ticks with nothing due", got-before)
	}
	mustPut(t, h, "t1", "cup", Settings{Windows: []string{"all", "day"}, EndsAt: "2026-12-01T12:00:00Z"})
	awaitTicks(t, h, 2)
	if got := h.note.Visits(); got != before+1 {
		t.Fatalf("%d visits after a settings change, want 1", got-before)
	}
	clk.set(time.Date(2026, 12, 1, 12, 1, 5, 0, time.UTC)) // the end plus ledger.FinalAfter: due
	awaitTicks(t, h, 2)
	if got := h.note.Visits(); got != before+2 {
		t.Fatalf("%d visits once the end came due, want 2", got-before)
	}
}
