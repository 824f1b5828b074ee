package notify

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

// These tests drive the notifier's rules without NATS: queues, drops,
// old news, ids and the byte window. The publishing over the embedded
// NATS, through the hub's hook, is tested in package hub
// (notify_test.go, notify_twins_test.go, notify_quota_test.go,
// notify_flood_test.go).

// newTest returns a Notifier whose clock is *now and whose log is out.
func newTest(now *time.Time, out *bytes.Buffer) *Notifier {
	return New(Config{Log: slog.New(slog.NewTextHandler(out, nil)), Now: func() time.Time { return *now }})
}

// stateRead gives st to fn, as a replica's read lock would, and counts the reads.
func stateRead(st *ledger.State, reads *int) func(fn func(*ledger.State) error) error {
	return func(fn func(*ledger.State) error) error {
		*reads++
		return fn(st)
	}
}

func held(n int, at int64) []ledger.HeldNote {
	out := make([]ledger.HeldNote, n)
	for i := range out {
		out[i] = ledger.HeldNote{Board: "cup", Held: ledger.Held{QID: uint64(i + 1), Member: fmt.Sprint("m", i), At: at}}
	}
	return out
}

// A tenant whose quarantines overflow its queue has the overflow counted
// and logged once, and a re-derivation started, while a twin tenant with
// the same board and ids keeps its whole queue and drops nothing.
func TestQueueOverflowIsolated(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var logs bytes.Buffer
	n := newTest(&now, &logs)
	n.SetQueueCap(3)
	var reads int
	a := n.Tenant("a", stateRead(ledger.New(), &reads))
	b := n.Tenant("b", stateRead(ledger.New(), &reads))
	at := now.UnixMilli()
	a.Applied(&ledger.Outcome{Held: held(5, at)}, now)
	a.Applied(&ledger.Outcome{Held: held(5, at)}, now)
	b.Applied(&ledger.Outcome{Held: held(3, at)}, now)

	got := map[string][]string{}
	for _, note := range n.takeHeld(at) {
		got[note.Tenant] = append(got[note.Tenant], note.DedupID())
	}
	if len(got["a"]) != 3 || len(got["b"]) != 3 {
		t.Fatalf("queued %v: want 3 of each tenant", got)
	}
	if got["a"][0] != "a/submission.quarantined:cup:1" || got["b"][0] != "b/submission.quarantined:cup:1" {
		t.Fatalf("ids %v: want each tenant's own", got)
	}
	drops := n.Dropped()
	if len(drops) != 1 || drops[0] != (Drop{Tenant: "a", Reason: DropBufferFull, Count: 7}) {
		t.Fatalf("drops %+v: want a's 7 buffer_full", drops)
	}
	if c := strings.Count(logs.String(), "overflow its queue"); c != 1 {
		t.Fatalf("%d log lines for a's overflow, want 1 a minute:\n%s", c, logs.String())
	}
	if n.walks["a"] == nil || n.walks["b"] != nil {
		t.Fatalf("re-derivations %v: want a's only", n.walks)
	}
	// The walk reads a's state at the next pass, and ends (nothing is held there).
	if out := n.rederive([]*Tenant{a, b}, at); len(out) != 0 || reads != 1 || n.walks["a"] != nil {
		t.Fatalf("rederive: %d notes, %d reads, walks %v; want none, 1, none", len(out), reads, n.walks)
	}
}

// An amendment stored longer than Dedup ago is old news (a replay at start
// re-applies it): not queued. A recent one is queued under its tenant,
// unless it was published already.
func TestAmendedOldNews(t *testing.T) {
	now := time.Now()
	var logs bytes.Buffer
	n := newTest(&now, &logs)
	tn := n.Tenant("a", nil)
	note := ledger.Notification{ID: "standings.amended:cup:9", Type: "standings.amended"}
	tn.Applied(&ledger.Outcome{Notes: []ledger.Notification{note}}, now.Add(-Dedup-time.Minute))
	if got := n.takeHeld(now.UnixMilli()); len(got) != 0 {
		t.Fatalf("old news queued: %+v", got)
	}
	tn.Applied(&ledger.Outcome{Notes: []ledger.Notification{note}}, now)
	got := n.takeHeld(now.UnixMilli())
	if len(got) != 1 || got[0].Tenant != "a" || got[0].DedupID() != "a/standings.amended:cup:9" {
		t.Fatalf("queued %+v: want a's amendment", got)
	}
	n.markSent("a/standings.amended:cup:9", now.UnixMilli())
	tn.Applied(&ledger.Outcome{Notes: []ledger.Notification{note}}, now)
	if got := n.takeHeld(now.UnixMilli()); len(got) != 0 {
		t.Fatalf("a published amendment queued again: %+v", got)
	}
}

// A tenant is read when it opens and when its schedule moves, not on a
// pass with nothing due; a nil Tenant hears nothing.
func TestVisitOnlyWhenMoved(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var logs bytes.Buffer
	n := newTest(&now, &logs)
	var reads int
	tn := n.Tenant("a", stateRead(ledger.New(), &reads))
	ms := now.UnixMilli()
	n.visit(tn, ms, nil)
	n.visit(tn, ms+1000, nil)
	if reads != 1 {
		t.Fatalf("%d reads on opening and one idle pass, want 1", reads)
	}
	tn.Applied(&ledger.Outcome{}, now)
	n.visit(tn, ms+2000, nil)
	if reads != 1 {
		t.Fatalf("%d reads after an event that moved nothing, want 1", reads)
	}
	tn.Applied(&ledger.Outcome{Schedule: true}, now)
	n.visit(tn, ms+3000, nil)
	if reads != 2 {
		t.Fatalf("%d reads after a moved schedule, want 2", reads)
	}
	var none *Tenant
	none.Applied(&ledger.Outcome{Schedule: true, Held: held(1, ms)}, now)
}

// A stored message id is a DedupID already, or a bare id of before the
// upgrade, which takes the tenant of its subject.
func TestSeedID(t *testing.T) {
	for _, c := range []struct{ name, subject, id, want string }{
		{"dedup id", Subject("a"), "a/board.ended:cup:1", "a/board.ended:cup:1"},
		{"bare id", Subject("casino-b"), "board.ended:cup:1", "casino-b/board.ended:cup:1"},
		{"another tenant's subject", Subject("b"), "a/x:1", "a/x:1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := seedID(c.subject, c.id); got != c.want {
				t.Fatalf("seedID(%q, %q) = %q, want %q", c.subject, c.id, got, c.want)
			}
		})
	}
}

// A tenant's bytes count for the hours the stream keeps them, then age
// out; another tenant's are its own.
func TestBytesAgeOut(t *testing.T) {
	var logs bytes.Buffer
	start := time.Now().Add(-2 * time.Hour) // StoredBytes reads the stream's clock
	n := newTest(&start, &logs)
	n.account("a", 100, start)
	n.account("a", 50, start.Add(2*time.Hour))
	n.account("b", 7, start)
	if got := n.StoredBytes("a"); got != 150 {
		t.Fatalf("a: %d bytes, want 150", got)
	}
	var w byteWindow
	w.add(start, 100)
	w.add(start.Add(2*time.Hour), 50)
	for _, c := range []struct {
		at   time.Duration
		want int64
	}{{0, 150}, {maxAge - time.Hour, 150}, {maxAge + time.Hour, 50}, {maxAge + 3*time.Hour, 0}} {
		if got := w.total(start.Add(c.at)); got != c.want {
			t.Fatalf("at +%v: %d bytes, want %d", c.at, got, c.want)
		}
	}
	if got := n.StoredBytes("b"); got != 7 {
		t.Fatalf("b: %d bytes, want 7", got)
	}
}

// Past its quota, a tenant's quarantine notifications are dropped and
// marked published; a board.ended never is.
func TestOverQuota(t *testing.T) {
	now := time.Now()
	var logs bytes.Buffer
	n := newTest(&now, &logs)
	n.SetQuota(func(tenant string) int64 { return map[string]int64{"a": 100}[tenant] })
	n.account("a", 100, now)
	q := ledger.Notification{Tenant: "a", ID: "submission.quarantined:cup:1", Type: "submission.quarantined"}
	end := ledger.Notification{Tenant: "a", ID: "board.ended:cup:1", Type: "board.ended"}
	if !n.overQuota(q, now.UnixMilli()) || !n.published(q.DedupID()) {
		t.Fatal("a quarantine past the quota was not dropped")
	}
	if n.overQuota(end, now.UnixMilli()) {
		t.Fatal("a board.ended was refused by the quota")
	}
	q.Tenant = "b" // the default quota
	if n.overQuota(q, now.UnixMilli()) {
		t.Fatal("b's quarantine was refused by a's quota")
	}
}
