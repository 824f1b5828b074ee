package webhook

import (
	"context"
	"crypto/hmac"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/notify"
)

const secret = "0123456789abcdef-the-webhook-secret"

// receiver is a webhook endpoint that checks every request's signature and
// records the notification ids it took, in order; while failing is set it
// answers 500.
type receiver struct {
	t       *testing.T
	failing atomic.Bool
	mu      sync.Mutex
	took    []string // ids answered 200, in order
	tries   map[string]int
	bad     []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var n hub.Notification
	rc.mu.Lock()
	defer rc.mu.Unlock()
	want := Sign(secret, body)
	if got := r.Header.Get("X-Rankwire-Signature"); !hmac.Equal([]byte(got), []byte(want)) {
		rc.bad = append(rc.bad, "signature "+got)
	}
	if err := verify("whsec_"+base64.StdEncoding.EncodeToString([]byte(secret)), r.Header, body, time.Now(), 5*time.Minute); err != nil {
		rc.bad = append(rc.bad, "webhook-signature: "+err.Error())
	}
	if err := json.Unmarshal(body, &n); err != nil || n.ID != r.Header.Get("X-Rankwire-Id") || r.Method != http.MethodPost {
		rc.bad = append(rc.bad, fmt.Sprintf("body %s id %q: %v", body, r.Header.Get("X-Rankwire-Id"), err))
	}
	rc.tries[n.ID]++
	if rc.failing.Load() {
		http.Error(w, "down for maintenance", http.StatusInternalServerError)
		return
	}
	rc.took = append(rc.took, n.ID)
}

func (rc *receiver) taken() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.took)
}

// loopbackAllowed is --webhook-allow 127.0.0.0/8: the tests' receivers
// listen on loopback, which the destination policy refuses by default.
func loopbackAllowed(t *testing.T) []netip.Prefix {
	t.Helper()
	allow, err := ParseAllow([]string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	return allow
}

func startHub(t *testing.T, dir string) *hub.Hub {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := hub.Start(ctx, hub.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func quarantine(t *testing.T, h *hub.Hub, members ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, m := range members {
		if _, err := h.Submit(ctx, "t1", "cup", []hub.Item{{Member: m, Score: 1e9}}); err != nil {
			t.Fatal(err)
		}
	}
}

// Notifications reach the tenant's webhook signed, in order, once each
// taken; a 500 is retried, the next waits for it; a gateway restart while
// one is refused loses nothing (the consumer is durable); another tenant's
// notifications never reach this webhook.
func TestDeliveryOrderRetryRestart(t *testing.T) {
	rc := &receiver{t: t, tries: map[string]int{}}
	rc.failing.Store(true)
	srv := httptest.NewServer(rc)
	defer srv.Close()
	dir := t.TempDir()
	h := startHub(t, dir)
	max := 10.0
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tenant := range []string{"t1", "t2"} {
		if _, err := h.PutBoard(ctx, tenant, "cup", hub.Settings{Rules: &hub.Rules{MaxScore: &max}}); err != nil {
			t.Fatal(err)
		}
	}
	hooks := func() map[string]Hook { return map[string]Hook{"t1": {URL: srv.URL, Secret: secret}} }
	fast := func(int) time.Duration { return 20 * time.Millisecond }
	d := Start(Config{JS: h.JetStream(), Keys: h.Privacy().Keys(), Hooks: hooks, Backoff: fast, Resync: 50 * time.Millisecond, AckWait: 2 * time.Second, Allow: loopbackAllowed(t)})
	// Let the consumer exist before the first notification: it delivers
	// what is stored after its creation.
	await.For(t, 10*time.Second, func() error {
		if _, err := h.JetStream().Consumer(ctx, notify.Stream, consumerName("t1")); err != nil {
			return err
		}
		return nil
	})
	quarantine(t, h, "a", "b")
	if _, err := h.Submit(ctx, "t2", "cup", []hub.Item{{Member: "other", Score: 1e9}}); err != nil {
		t.Fatal(err)
	}
	await.For(t, 10*time.Second, func() error { // the first is refused, retried, and holds the second back
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if rc.tries["submission.quarantined:cup:1"] < 3 {
			return fmt.Errorf("tries %v", rc.tries)
		}
		if rc.tries["submission.quarantined:cup:2"] != 0 {
			return fmt.Errorf("the second was sent while the first was refused: %v", rc.tries)
		}
		return nil
	})

	// The gateway restarts while the receiver still refuses: the held
	// notification comes back after AckWait (JetStream forgets the NAK of
	// a graceful stop when its server restarts).
	d.Close()
	h.Close()
	h = startHub(t, dir)
	defer h.Close()
	quarantine(t, h, "c")
	rc.failing.Store(false)
	d = Start(Config{JS: h.JetStream(), Keys: h.Privacy().Keys(), Hooks: hooks, Backoff: fast, Resync: 50 * time.Millisecond, AckWait: 2 * time.Second, Allow: loopbackAllowed(t)})
	defer d.Close()
	want := []string{"submission.quarantined:cup:1", "submission.quarantined:cup:2", "submission.quarantined:cup:3"}
	await.For(t, 20*time.Second, func() error {
		if got := rc.taken(); !slices.Equal(got, want) {
			return fmt.Errorf("taken %v, want %v", got, want)
		}
		// Counted once JetStream confirmed the ack, a round trip after
		// the receiver answered.
		if st := d.Stats(); st.Delivered != 3 {
			return fmt.Errorf("stats %+v, want 3 delivered", st)
		}
		return nil
	})
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bad) > 0 {
		t.Fatalf("bad requests: %v", rc.bad)
	}
	if st := d.Stats(); st.Delivered != 3 || st.Dropped != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// A notification refused past GiveUp is dropped, and the next one goes.
func TestGiveUp(t *testing.T) {
	rc := &receiver{t: t, tries: map[string]int{}}
	rc.failing.Store(true)
	srv := httptest.NewServer(rc)
	defer srv.Close()
	h := startHub(t, t.TempDir())
	defer h.Close()
	max := 10.0
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := h.PutBoard(ctx, "t1", "cup", hub.Settings{Rules: &hub.Rules{MaxScore: &max}}); err != nil {
		t.Fatal(err)
	}
	d := Start(Config{JS: h.JetStream(), Keys: h.Privacy().Keys(), Hooks: func() map[string]Hook { return map[string]Hook{"t1": {URL: srv.URL, Secret: secret}} },
		Backoff: func(int) time.Duration { return 20 * time.Millisecond }, GiveUp: 300 * time.Millisecond, Resync: 50 * time.Millisecond, Allow: loopbackAllowed(t)})
	defer d.Close()
	await.For(t, 10*time.Second, func() error {
		_, err := h.JetStream().Consumer(ctx, notify.Stream, consumerName("t1"))
		return err
	})
	quarantine(t, h, "a")
	await.For(t, 10*time.Second, func() error {
		if d.Stats().Dropped != 1 {
			return fmt.Errorf("stats %+v", d.Stats())
		}
		return nil
	})
	rc.failing.Store(false)
	quarantine(t, h, "b")
	await.For(t, 10*time.Second, func() error {
		if got := rc.taken(); !slices.Equal(got, []string{"submission.quarantined:cup:2"}) {
			return fmt.Errorf("taken %v", got)
		}
		return nil
	})
}

func TestSign(t *testing.T) {
	// HMAC-SHA256 of "hello" keyed with "key", as Python computes it:
	// hmac.new(b"key", b"hello", hashlib.sha256).hexdigest()
	if got := Sign("key", []byte("hello")); got != "sha256=9307b3b915efb5171ff14d8cb55fbcc798c6c0ef1456d66ded1a6aa723a58b7b" {
		t.Fatalf("Sign = %s", got)
	}
}
