package api

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/natstest"
)

// startSmallNATS starts a nats-server with JetStream limited to maxStore
// bytes on loopback, for a hub to use as its external server while the
// test, as an operator would, frees space through its own connection.
func startSmallNATS(t *testing.T, maxStore int64) (*server.Server, jetstream.JetStream) {
	t.Helper()
	s := natstest.ServerWith(t, func(o *server.Options) { o.JetStreamMaxStore = maxStore })
	_, js := natstest.Connect(t, s)
	return s, js
}

// TestStoreFullAnswers503AndRecovers: with a 1 MB store, submissions fill
// it; then writes answer 503 unavailable saying the store is full (naming
// no stream) and /readyz answers 503 with the reason; once space is freed
// (a stream deleted), writes and /readyz recover with no restart.
func TestStoreFullAnswers503AndRecovers(t *testing.T) {
	ns, js := startSmallNATS(t, 1<<20)
	keys, h := startTestHub(t, ``, hub.Config{NATSURL: ns.ClientURL()})
	srv := httptest.NewServer(New(Config{Hub: h, Verifier: auth.NewVerifier(keys, auth.Options{}), Keys: keys}))
	t.Cleanup(srv.Close)
	e := &env{t: t, srv: srv, keys: keys, hub: h}
	a, b := e.token("a", auth.RoleAdmin), e.token("b", auth.RoleAdmin)
	e.must(200, "PUT", "/v1/boards/keep", a, "")
	e.must(200, "PUT", "/v1/boards/filler", b, "")
	if out := e.must(200, "GET", "/readyz", "", ""); out["ready"] != true {
		t.Fatalf("readyz at start: %v", out)
	}

	var batch strings.Builder
	status, out := 200, map[string]any(nil)
	for round := 0; round < 200 && status == 200; round++ { // up to 200 × ~40 KB, far past 1 MB
		batch.Reset()
		batch.WriteString(`{"scores":[`)
		for i := range 500 {
			if i > 0 {
				batch.WriteString(",")
			}
			fmt.Fprintf(&batch, `{"member":"m%03d-%04d","score":%d,"id":"%03d-%04d-xxxxxxxxxxxxxxxx"}`, round, i, i, round, i)
		}
		batch.WriteString(`]}`)
		status, out = e.do("POST", "/v1/boards/filler/scores", b, batch.String())
	}
	code, msg := errCode(out)
	if status != 503 || code != "unavailable" || !strings.Contains(msg, "store is full") || strings.Contains(msg, "RW_") {
		t.Fatalf("filling: %d %s %q, want 503 unavailable saying the store is full", status, code, msg)
	}
	code, msg = errCode(e.must(503, "POST", "/v1/boards/keep/scores", a, `{"member":"ann","score":1}`))
	if code != "unavailable" || !strings.Contains(msg, "store is full") || strings.Contains(msg, "casino") {
		t.Fatalf("another tenant: %s %q", code, msg)
	}
	ready := e.must(503, "GET", "/readyz", "", "")
	if reason, _ := ready["reason"].(string); ready["ready"] != false || !strings.Contains(reason, "store is full") {
		t.Fatalf("readyz on a full store: %v", ready)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := js.DeleteStream(ctx, "RW_casino-b"); err != nil {
		t.Fatal(err)
	}
	await.For(t, 15*time.Second, func() error {
		if status, out := e.do("POST", "/v1/boards/keep/scores", a, `{"member":"ann","score":2}`); status != 200 {
			return fmt.Errorf("submit after freeing: %d %v", status, out)
		}
		if status, out := e.do("GET", "/readyz", "", ""); status != 200 || out["ready"] != true {
			return fmt.Errorf("readyz after freeing: %d %v", status, out)
		}
		return nil
	})
}

// TestReadyzReasons: /readyz answers exactly {"ready":true} while all is
// well; a hub whose NATS connection is gone answers 503 naming NATS.
func TestReadyzReasons(t *testing.T) {
	e := newEnv(t, Config{})
	if out := e.must(200, "GET", "/readyz", "", ""); out["ready"] != true || len(out) != 1 {
		t.Fatalf("readyz: %v", out)
	}
	e.hub.Close()
	out := e.must(503, "GET", "/readyz", "", "")
	if reason, _ := out["reason"].(string); out["ready"] != false || !strings.Contains(reason, "NATS") {
		t.Fatalf("readyz with NATS gone: %v", out)
	}
}
