package security

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hookReceiver is a tenant's webhook endpoint on loopback: it counts the
// connections made to it and keeps every request.
type hookReceiver struct {
	*httptest.Server
	conns atomic.Int64
	mu    sync.Mutex
	reqs  []hookRequest
}

type hookRequest struct {
	header http.Header
	body   []byte
}

func newHookReceiver(t *testing.T) *hookReceiver {
	rc := &hookReceiver{}
	rc.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.reqs = append(rc.reqs, hookRequest{r.Header.Clone(), body})
	}))
	rc.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rc.conns.Add(1)
		}
	}
	rc.Start()
	t.Cleanup(rc.Close)
	return rc
}

func (rc *hookReceiver) first() (hookRequest, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.reqs) == 0 {
		return hookRequest{}, false
	}
	return rc.reqs[0], true
}

// hookSecretW1 is the HS256 key of the webhook tests' tenant.
var hookSecretW1 = []byte(strings.Repeat("W", 32) + "-webhook-tenant")

// startHookGateway starts a gateway whose key file gives tenant A a webhook
// to url signed with secret; env adds RANKWIRE_* settings.
func startHookGateway(t *testing.T, url, secret string, env ...string) *gateway {
	t.Helper()
	dir := t.TempDir()
	keys := map[string]any{"tenants": map[string]any{tenantA: map[string]any{
		"keys":    []map[string]string{{"kid": "w1", "alg": "HS256", "secret": base64.StdEncoding.EncodeToString(hookSecretW1)}},
		"webhook": map[string]string{"url": url, "secret": secret},
	}}}
	body, _ := json.Marshal(keys)
	path := filepath.Join(dir, "hook-keys.json")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := startGateway(dir, nil, append([]string{"RANKWIRE_KEYS=" + path}, env...)...)
	if g != nil {
		t.Cleanup(g.stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// call sends one request to g with token and returns the status.
func call(t *testing.T, g *gateway, method, path, token, body string) int {
	t.Helper()
	req, _ := http.NewRequest(method, g.url(path), strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// quarantineUntil submits scores that the board's rules hold (each one a
// notification for the webhook) until done reports true: the tenant's
// delivery consumer starts with the notifications stored after it exists,
// which an outsider cannot see.
func quarantineUntil(t *testing.T, g *gateway, done func() bool) {
	t.Helper()
	admin := hs(t, "w1", hookSecretW1, base(tenantA, "admin"))
	if s := call(t, g, "PUT", "/v1/boards/hooked", admin, `{"rules":{"max_score":10}}`); s != 200 {
		t.Fatalf("PUT board: %d", s)
	}
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; !done(); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("not done after 30 s; gateway log:\n%s", tail(g.logText(), 3000))
		}
		if i%10 == 0 {
			if s := call(t, g, "POST", "/v1/boards/hooked/scores", admin, fmt.Sprintf(`{"member":"m%d","score":1e9}`, i)); s != 200 {
				t.Fatalf("POST score: %d", s)
			}
		}
		time.Sleep(100 * time.Millisecond) // polling an outside process: no event to await
	}
}

var metricsAddrLine = regexp.MustCompile(`metrics_addr=(\S+)`)

// metric returns the value of the series named exactly so on g's metrics
// listener, or -1.
func metric(t *testing.T, g *gateway, series string) float64 {
	t.Helper()
	m := metricsAddrLine.FindStringSubmatch(g.logText())
	if m == nil {
		t.Fatal("no metrics_addr in the ready line")
	}
	resp, err := client.Get("http://" + m[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}

// A tenant's webhook pointing at loopback is refused by the gateway binary
// as run by default: the receiver never sees a connection, the refusal is
// counted by reason, and the log holds neither the URL's path nor its
// query. With --webhook-allow 127.0.0.0/8 the same webhook is delivered,
// and the delivery verifies as a Standard Webhooks receiver verifies it; the
// same request replayed six minutes later fails the receiver's tolerance.
func TestWebhookDestinationPolicy(t *testing.T) {
	rc := newHookReceiver(t)
	url := rc.URL + "/hooks/PATHSECRET?key=QUERYSECRET"
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))

	g := startHookGateway(t, url, secret)
	quarantineUntil(t, g, func() bool { return metric(t, g, `rankwire_webhook_refused_total{reason="loopback"}`) >= 1 })
	if n := rc.conns.Load(); n != 0 {
		t.Fatalf("the loopback receiver was connected to %d times without --webhook-allow", n)
	}
	if log := g.logText(); strings.Contains(log, "PATHSECRET") || strings.Contains(log, "QUERYSECRET") {
		t.Fatalf("the log holds the webhook URL's path or query:\n%s", tail(log, 3000))
	}
	if !strings.Contains(g.logText(), "destination refused by policy") {
		t.Fatalf("the refusal was not logged:\n%s", tail(g.logText(), 3000))
	}
	g.stop()

	g = startHookGateway(t, url, secret, "RANKWIRE_WEBHOOK_ALLOW=127.0.0.0/8")
	var got hookRequest
	quarantineUntil(t, g, func() (ok bool) { got, ok = rc.first(); return ok })
	now := time.Now()
	if err := verifyStandardWebhook(secret, got.header, got.body, now); err != nil {
		t.Fatalf("the delivery does not verify: %v (headers %v)", err, got.header)
	}
	if err := verifyStandardWebhook(secret, got.header, got.body, now.Add(6*time.Minute)); err == nil {
		t.Fatal("the delivery replayed six minutes later verified")
	}
	if log := g.logText(); strings.Contains(log, "PATHSECRET") || strings.Contains(log, "QUERYSECRET") {
		t.Fatalf("the log holds the webhook URL's path or query:\n%s", tail(log, 3000))
	}
}

// verifyStandardWebhook is a receiver's check, from the Standard Webhooks
// specification: a timestamp within 5 minutes of now, then a "v1,"
// signature over id.timestamp.body keyed with the base64 after "whsec_".
func verifyStandardWebhook(secret string, h http.Header, body []byte, now time.Time) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || id == "" {
		return fmt.Errorf("webhook-id %q, webhook-timestamp %q", id, ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("webhook-timestamp %v off", d)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if v, b64, _ := strings.Cut(sig, ","); v == "v1" {
			if b, err := base64.StdEncoding.DecodeString(b64); err == nil && hmac.Equal(b, mac.Sum(nil)) {
				return nil
			}
		}
	}
	return errors.New("no v1 signature matches")
}
