package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/notify"
)

// bodies is a webhook receiver that keeps every delivery: its webhook-id
// and body, in order.
type bodies struct {
	mu  sync.Mutex
	got []string // "<webhook-id> <body>"
}

func (b *bodies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got = append(b.got, r.Header.Get(HeaderID)+" "+string(body))
}

func (b *bodies) all() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.got...)
}

// TestErasureRedeliversWithoutName: a board.ended delivered with p1's
// name is delivered again once p1's personal data is erased, with the
// same webhook-id (receivers deduplicate it, or replace what they kept)
// and without the name; the twin tenant's p1 keeps its name and gets
// nothing more.
func TestErasureRedeliversWithoutName(t *testing.T) {
	var clock atomicTime
	clock.set(time.Now().UTC().Truncate(time.Second))
	ends := clock.now().Add(time.Hour)
	tenants := []string{"casino-a", "casino-b"}
	rcs, handlers := map[string]*bodies{}, map[string]http.Handler{}
	for _, tn := range tenants {
		rc := &bodies{}
		rcs[tn], handlers[tn] = rc, rc
	}
	ctx, h := startTwins(t, &clock, handlers)
	for _, tn := range tenants {
		putWeekly(t, ctx, h, tn, hub.Settings{EndsAt: ends.Format(time.RFC3339)})
		if _, err := h.Submit(ctx, tn, "weekly", []hub.Item{{Member: "p1", Score: 5}}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.PutProfile(ctx, tn, "p1", hub.Profile{Name: "Qzxv " + tn}); err != nil {
			t.Fatal(err)
		}
	}
	clock.set(ends.Add(2 * time.Minute)) // the end, final: board.ended names p1
	deliveries := func(tn string, n int) []string {
		t.Helper()
		await.For(t, 15*time.Second, func() error {
			if got := rcs[tn].all(); len(got) < n {
				return fmt.Errorf("%s got %d deliveries, want %d", tn, len(got), n)
			}
			return nil
		})
		return rcs[tn].all()
	}
	for _, tn := range tenants {
		if got := deliveries(tn, 1); !strings.Contains(got[0], `"name":"Qzxv `+tn+`"`) {
			t.Fatalf("%s: %s", tn, got[0])
		}
	}
	// Stored with the names sealed, delivered as the notification's JSON.
	if raw := storedNotes(t, ctx, h, "casino-a"); len(raw) != 1 || strings.Contains(raw[0], "Qzxv") || !strings.Contains(raw[0], `"sealed":`) {
		t.Fatalf("stored: %v", raw)
	}
	if _, err := h.Privacy().Erase(ctx, "casino-a", "p1", hub.Reach{}); err != nil {
		t.Fatal(err)
	}
	got := deliveries("casino-a", 2)
	id := func(s string) string { return s[:strings.IndexByte(s, ' ')] }
	if len(got) != 2 || id(got[1]) != id(got[0]) || strings.Contains(got[1], "Qzxv") || !strings.Contains(got[1], `"member":"p1"`) {
		t.Fatalf("after the erasure casino-a got:\n%s", strings.Join(got, "\n"))
	}
	if got := rcs["casino-b"].all(); len(got) != 1 || !strings.Contains(got[0], "Qzxv casino-b") {
		t.Fatalf("the twin tenant got:\n%s", strings.Join(got, "\n"))
	}
	for _, d := range append(got, rcs["casino-b"].all()...) {
		wireShaped(t, d[strings.IndexByte(d, ' ')+1:])
	}
}

// wireShaped fails unless body is a notification's JSON exactly as
// ledger.Notification encodes (no field of the stored layout, nothing
// reordered): what receivers got before names were sealed.
func wireShaped(t *testing.T, body string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	var n hub.Notification
	if err := dec.Decode(&n); err != nil {
		t.Fatalf("delivered %s: %v", body, err)
	}
	if again, _ := json.Marshal(n); string(again) != body {
		t.Fatalf("delivered\n%s\nnot as encoded\n%s", body, again)
	}
}

// storedNotes returns the bodies of tenant's notifications as the stream
// stores them.
func storedNotes(t *testing.T, ctx context.Context, h *hub.Hub, tenant string) []string {
	t.Helper()
	st, err := h.JetStream().Stream(ctx, notify.Stream)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for seq := uint64(1); ; {
		m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(notify.Subject(tenant)))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(m.Data))
		seq = m.Sequence + 1
	}
}

// TestClearStoredNotificationDelivered: a notification stored in clear
// (by a gateway from before names were sealed: no Rankwire-Sealed header)
// is delivered byte for byte as stored, with its webhook-id.
func TestClearStoredNotificationDelivered(t *testing.T) {
	var clock atomicTime
	clock.set(time.Now().UTC())
	rc := &bodies{}
	ctx, h := startTwins(t, &clock, map[string]http.Handler{"casino-a": rc})
	putWeekly(t, ctx, h, "casino-a", hub.Settings{})
	old := `{"id":"board.ended:old:1","type":"board.ended","tenant":"casino-a","board":"old","at":"2026-11-01T00:00:00Z","rows":[{"rank":1,"member":"p1","score":5,"subscore":0,"name":"Old Name"}]}`
	msg := nats.NewMsg(notify.Subject("casino-a"))
	msg.Data = []byte(old)
	msg.Header.Set(jetstream.MsgIDHeader, "casino-a/board.ended:old:1")
	if _, err := h.JetStream().PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
	await.For(t, 15*time.Second, func() error {
		if len(rc.all()) == 0 {
			return errors.New("not delivered yet")
		}
		return nil
	})
	if got := rc.all(); len(got) != 1 || got[0] != "board.ended:old:1 "+old {
		t.Fatalf("delivered %q", got)
	}
}
