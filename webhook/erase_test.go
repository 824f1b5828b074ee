package webhook

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
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
}
