package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/notify"
)

// verify checks a request the way a Standard Webhooks receiver library does,
// written from the specification rather than from this package: the secret
// is "whsec_" and the base64 key; the signed content is id "." timestamp "."
// body; the header holds space-separated "v1,<base64>" signatures, one of
// which must match; a timestamp more than tolerance from now is refused
// before the signature is looked at. The same code is in docs/PROTOCOL.md.
func verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return fmt.Errorf("secret: %w", err)
	}
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook-id, webhook-timestamp or webhook-signature")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook-timestamp %q: %w", ts, err)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("webhook-timestamp %s is %v from now: too old or too new", ts, d)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		version, b64, _ := strings.Cut(s, ",")
		got, err := base64.StdEncoding.DecodeString(b64)
		if version == "v1" && err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no matching signature")
}

// capture is a receiver that keeps every request it is sent and takes it.
type capture struct {
	mu   sync.Mutex
	reqs []captured
}

type captured struct {
	header http.Header
	body   []byte
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, captured{r.Header.Clone(), body})
}

func (c *capture) first() (captured, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.reqs) == 0 {
		return captured{}, errors.New("nothing received yet")
	}
	return c.reqs[0], nil
}

// A delivery verifies as a Standard Webhooks receiver verifies it, with a
// whsec_ secret; the same request replayed six minutes later fails the
// receiver's five-minute tolerance; a changed body or id fails the
// signature.
func TestStandardWebhooksDelivery(t *testing.T) {
	const whsec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	rc := &capture{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	h := startHub(t, t.TempDir())
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	max := 10.0
	if _, err := h.PutBoard(ctx, "t1", "cup", hub.Settings{Rules: &hub.Rules{MaxScore: &max}}); err != nil {
		t.Fatal(err)
	}
	d := Start(Config{JS: h.JetStream(), Keys: h.Privacy().Keys(), Resync: 50 * time.Millisecond, Allow: loopbackAllowed(t),
		Hooks: func() map[string]Hook { return map[string]Hook{"t1": {URL: srv.URL, Secret: whsec}} }})
	defer d.Close()
	await.For(t, 10*time.Second, func() error {
		_, err := h.JetStream().Consumer(ctx, notify.Stream, consumerName("t1"))
		return err
	})
	quarantine(t, h, "a")
	var got captured
	await.For(t, 10*time.Second, func() (err error) { got, err = rc.first(); return err })

	now := time.Now()
	if err := verify(whsec, got.header, got.body, now, 5*time.Minute); err != nil {
		t.Fatalf("a fresh delivery: %v (headers %v)", err, got.header)
	}
	if id := got.header.Get("webhook-id"); id != "submission.quarantined:cup:1" || got.header.Get("X-Rankwire-Id") != id {
		t.Fatalf("webhook-id %q, X-Rankwire-Id %q", id, got.header.Get("X-Rankwire-Id"))
	}
	if err := verify(whsec, got.header, got.body, now.Add(6*time.Minute), 5*time.Minute); err == nil || !strings.Contains(err.Error(), "too old") {
		t.Fatalf("replayed 6 min later: %v, want refused as too old", err)
	}
	tampered := append([]byte(nil), got.body...)
	tampered[len(tampered)-2] ^= 1
	if err := verify(whsec, got.header, tampered, now, 5*time.Minute); err == nil {
		t.Fatal("a changed body verified")
	}
	other := got.header.Clone()
	other.Set("webhook-id", "submission.quarantined:cup:2")
	if err := verify(whsec, other, got.body, now, 5*time.Minute); err == nil {
		t.Fatal("the signature of one id verified for another")
	}
}

// A secret without the prefix is keyed with its bytes as written: a
// receiver's library takes it as "whsec_" + base64(secret). A whsec_ secret
// that is not base64 signs nothing.
func TestSigningKey(t *testing.T) {
	body := []byte(`{"id":"x"}`)
	at := time.Unix(1_700_000_000, 0)
	h := http.Header{}
	if err := signRequest(h, secret, "x", at, body); err != nil {
		t.Fatal(err)
	}
	asStandard := "whsec_" + base64.StdEncoding.EncodeToString([]byte(secret))
	if err := verify(asStandard, h, body, at, time.Minute); err != nil {
		t.Fatalf("a plain secret, verified as whsec_+base64: %v", err)
	}
	if h.Get(HeaderLegacySignature) != Sign(secret, body) {
		t.Fatalf("the legacy header %q", h.Get(HeaderLegacySignature))
	}
	if err := signRequest(http.Header{}, "whsec_not base64!", "x", at, body); !errors.Is(err, ErrSecret) {
		t.Fatalf("a whsec_ secret that is not base64: %v", err)
	}
}

// The Standard Webhooks specification's own example: its secret, id,
// timestamp and payload give its signature.
func TestSignV1SpecVector(t *testing.T) {
	key, err := SigningKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := SignV1(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("SignV1 = %s, want %s", got, want)
	}
}
