package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/logtest"
	"github.com/rankwire/rankwire/internal/notify"
)

func TestPolicyCheck(t *testing.T) {
	allow := func(s ...string) []netip.Prefix {
		p, err := ParseAllow(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name  string
		addr  string
		allow []netip.Prefix
		self  []string
		want  string // the reason, or "" for allowed
	}{
		{"public v4", "93.184.216.34:443", nil, nil, ""},
		{"public v6", "[2606:2800:220:1::1]:443", nil, nil, ""},
		{"loopback", "127.0.0.1:80", nil, nil, ReasonLoopback},
		{"loopback elsewhere in 127/8", "127.1.2.3:80", nil, nil, ReasonLoopback},
		{"::1", "[::1]:80", nil, nil, ReasonLoopback},
		{"v4-mapped loopback", "[::ffff:127.0.0.1]:80", nil, nil, ReasonLoopback},
		{"cloud metadata", "169.254.169.254:80", nil, nil, ReasonLinkLocal},
		{"fe80::/10", "[fe80::1]:80", nil, nil, ReasonLinkLocal},
		{"10/8", "10.1.2.3:80", nil, nil, ReasonPrivate},
		{"172.16/12", "172.31.255.1:80", nil, nil, ReasonPrivate},
		{"172.32 is public", "172.32.0.1:80", nil, nil, ""},
		{"192.168/16", "192.168.0.1:80", nil, nil, ReasonPrivate},
		{"fc00::/7", "[fd00:ec2::254]:80", nil, nil, ReasonPrivate},
		{"carrier-grade NAT", "100.100.100.200:80", nil, nil, ReasonPrivate},
		{"0.0.0.0", "0.0.0.0:80", nil, nil, ReasonUnspecified},
		{"0/8", "0.1.2.3:80", nil, nil, ReasonUnspecified},
		{"::", "[::]:80", nil, nil, ReasonUnspecified},
		{"multicast v4", "224.0.0.1:80", nil, nil, ReasonMulticast},
		{"multicast v6", "[ff05::1]:80", nil, nil, ReasonMulticast},
		{"broadcast", "255.255.255.255:80", nil, nil, ReasonReserved},
		{"loopback allowed", "127.0.0.1:80", allow("127.0.0.0/8"), nil, ""},
		{"private allowed by its own prefix only", "10.1.2.3:80", allow("127.0.0.0/8"), nil, ReasonPrivate},
		{"several prefixes", "10.1.2.3:80", allow("127.0.0.0/8", "10.0.0.0/8"), nil, ""},
		{"a single IP", "192.168.1.7:80", allow("192.168.1.7"), nil, ""},
		{"::1 allowed", "[::1]:80", allow("::1/128"), nil, ""},
		{"a zoned link-local", "[fe80::1%eth0]:80", nil, nil, ReasonLinkLocal},
		{"a zoned link-local allowed", "[fe80::1%eth0]:80", allow("fe80::/10"), nil, ""},
		{"self", "127.0.0.1:8080", nil, []string{"127.0.0.1:8080"}, ReasonSelf},
		{"self is not lifted by a range", "127.0.0.1:8080", allow("127.0.0.0/8"), []string{"127.0.0.1:8080"}, ReasonSelf},
		{"self lifted by its single address", "127.0.0.1:8080", allow("127.0.0.1/32"), []string{"127.0.0.1:8080"}, ""},
		{"another port beside self", "127.0.0.1:9000", allow("127.0.0.0/8"), []string{"127.0.0.1:8080"}, ""},
		{"self on every address", "127.0.0.1:8080", allow("127.0.0.0/8"), []string{"[::]:8080"}, ReasonSelf},
		{"self on every address, v4", "127.0.0.1:8080", allow("127.0.0.0/8"), []string{"0.0.0.0:8080"}, ReasonSelf},
		{"an off listener", "127.0.0.1:8080", allow("127.0.0.0/8"), []string{"none", ""}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := newPolicy(tc.allow, tc.self).check(netip.MustParseAddrPort(tc.addr))
			var got string
			if err != nil {
				got = err.(*RefusedError).Reason
			}
			if got != tc.want {
				t.Fatalf("check(%s) = %v, want reason %q", tc.addr, err, tc.want)
			}
		})
	}
}

func TestParseAllow(t *testing.T) {
	got, err := ParseAllow([]string{"127.0.0.0/8", "10.1.2.3/8", "::1"})
	if err != nil || fmt.Sprint(got) != "[127.0.0.0/8 10.0.0.0/8 ::1/128]" {
		t.Fatalf("ParseAllow = %v, %v", got, err)
	}
	if _, err := ParseAllow([]string{"10.0.0.0/33"}); err == nil || !strings.Contains(err.Error(), "10.0.0.0/33") {
		t.Fatalf("a bad prefix: %v", err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://hooks.example.com/T0/B1/xoxb-secret?token=abc#frag": "https://hooks.example.com",
		"http://user:pw@10.0.0.1:8080/x":                             "http://10.0.0.1:8080",
		"::not a url":                                                "(unparsable URL)",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// countingServer is a receiver that counts the connections made to it.
func countingServer(t *testing.T, network, addr string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("listen %s: %v", addr, err)
	}
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Listener = ln
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// Without --webhook-allow, webhooks to loopback (by address and by the
// name localhost), to ::1 and to the cloud metadata address are refused
// after resolution and never connected to; each is counted by reason and
// logged once a minute per tenant, the URL without its path or query.
func TestDestinationsRefused(t *testing.T) {
	v4, v4conns := countingServer(t, "tcp4", "127.0.0.1:0")
	port := v4.Listener.Addr().(*net.TCPAddr).Port
	hooks := map[string]Hook{
		"t1": {URL: v4.URL + "/hook/SECRETPATH?token=SECRETQUERY", Secret: secret},
		"t2": {URL: fmt.Sprintf("http://localhost:%d/hook/SECRETPATH", port), Secret: secret},
		"t3": {URL: "http://169.254.169.254/latest/meta-data/?SECRETQUERY", Secret: secret},
	}
	var v6conns *atomic.Int64
	if ln, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		ln.Close()
		var v6 *httptest.Server
		v6, v6conns = countingServer(t, "tcp6", "[::1]:0")
		hooks["t4"] = Hook{URL: v6.URL + "/SECRETPATH", Secret: secret}
	}
	h := startHub(t, t.TempDir())
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	max := 10.0
	// A board name per tenant: notification ids are not scoped by tenant
	// (hub.Notification.ID), and the stream keeps one per id.
	for tenant := range hooks {
		if _, err := h.PutBoard(ctx, tenant, "cup-"+tenant, hub.Settings{Rules: &hub.Rules{MaxScore: &max}}); err != nil {
			t.Fatal(err)
		}
	}
	var logs logtest.Buffer
	d := Start(Config{JS: h.JetStream(), Keys: h.Privacy().Keys(), Resync: 50 * time.Millisecond, Hooks: func() map[string]Hook { return hooks },
		Backoff: func(int) time.Duration { return 10 * time.Millisecond }, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer d.Close()
	for tenant := range hooks {
		await.For(t, 10*time.Second, func() error {
			_, err := h.JetStream().Consumer(ctx, notify.Stream, consumerName(tenant))
			return err
		})
		if _, err := h.Submit(ctx, tenant, "cup-"+tenant, []hub.Item{{Member: "a", Score: 1e9}}); err != nil {
			t.Fatal(err)
		}
	}
	loopbacks := uint64(2 + len(hooks) - 3) // t1, t2 and t4 where ::1 listens
	await.For(t, 10*time.Second, func() error {
		st := d.Stats()
		if st.Refused[ReasonLoopback] < 3*loopbacks || st.Refused[ReasonLinkLocal] < 3 {
			return fmt.Errorf("refused %v", st.Refused)
		}
		return nil
	})
	if n := v4conns.Load(); n != 0 {
		t.Fatalf("127.0.0.1 was connected to %d times", n)
	}
	if v6conns != nil && v6conns.Load() != 0 {
		t.Fatalf("::1 was connected to %d times", v6conns.Load())
	}
	if st := d.Stats(); st.Delivered != 0 || st.Failed < st.Refused[ReasonLoopback]+st.Refused[ReasonLinkLocal] {
		t.Fatalf("stats %+v", st)
	}
	out := logs.String()
	if strings.Contains(out, "SECRET") {
		t.Fatalf("a URL's path or query was logged:\n%s", out)
	}
	if n := strings.Count(out, "destination refused by policy"); n != len(hooks) {
		t.Fatalf("%d refusals logged for %d tenants, want one each within the minute:\n%s", n, len(hooks), out)
	}
	for _, want := range []string{"url=http://169.254.169.254 ", "reason=link_local", "reason=loopback", fmt.Sprintf("url=http://localhost:%d ", port)} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
}

// A failed delivery (the receiver answers 500) logs the URL without path or
// query, in its own field and in the error.
func TestFailureLogRedacted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }))
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // connection refused: an error that names the URL
	h := startHub(t, t.TempDir())
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	max := 10.0
	hooks := map[string]Hook{
		"t1": {URL: srv.URL + "/SECRETPATH?SECRETQUERY", Secret: secret},
		"t2": {URL: dead.URL + "/SECRETPATH?SECRETQUERY", Secret: secret},
	}
	var logs logtest.Buffer
	d := Start(Config{JS: h.JetStream(), Keys: h.Privacy().Keys(), Resync: 50 * time.Millisecond, Hooks: func() map[string]Hook { return hooks }, Allow: loopbackAllowed(t),
		Backoff: func(int) time.Duration { return 10 * time.Millisecond }, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer d.Close()
	// A board name per tenant: notification ids are not scoped by tenant
	// (hub.Notification.ID), and the stream keeps one per id.
	for tenant := range hooks {
		if _, err := h.PutBoard(ctx, tenant, "cup-"+tenant, hub.Settings{Rules: &hub.Rules{MaxScore: &max}}); err != nil {
			t.Fatal(err)
		}
		await.For(t, 10*time.Second, func() error {
			_, err := h.JetStream().Consumer(ctx, notify.Stream, consumerName(tenant))
			return err
		})
		if _, err := h.Submit(ctx, tenant, "cup-"+tenant, []hub.Item{{Member: "a", Score: 1e9}}); err != nil {
			t.Fatal(err)
		}
	}
	await.For(t, 10*time.Second, func() error {
		out := logs.String()
		if !strings.Contains(out, "answered 500") || !strings.Contains(out, "connection refused") {
			return fmt.Errorf("log so far:\n%s", out)
		}
		return nil
	})
	if out := logs.String(); strings.Contains(out, "SECRET") {
		t.Fatalf("a URL's path or query was logged:\n%s", out)
	}
}

// An idle tenant's loop polls quietly: a pull that times out is not an
// error (it was logged as a warning at every poll).
func TestIdleIsQuiet(t *testing.T) {
	h := startHub(t, t.TempDir())
	defer h.Close()
	ctx := context.Background()
	if _, err := h.PutBoard(ctx, "t1", "cup", hub.Settings{}); err != nil {
		t.Fatal(err)
	}
	// The hub's notifier creates the notifications' stream at Start, in its
	// own goroutine: the dispatcher must not start before it exists, or its
	// first resyncs log that the stream is missing.
	await.For(t, 10*time.Second, func() error {
		_, err := h.JetStream().Stream(ctx, notify.Stream)
		return err
	})
	var logs logtest.Buffer
	var polls atomic.Int64
	d := Start(Config{JS: h.JetStream(), Keys: h.Privacy().Keys(), Resync: 50 * time.Millisecond, Poll: 20 * time.Millisecond, Allow: loopbackAllowed(t),
		Hooks: func() map[string]Hook {
			polls.Add(1)
			return map[string]Hook{"t1": {URL: "http://127.0.0.1:1/", Secret: secret}}
		},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	defer d.Close()
	await.For(t, 10*time.Second, func() error {
		_, err := h.JetStream().Consumer(ctx, notify.Stream, consumerName("t1"))
		return err
	})
	// Twenty resyncs (1 s) are fifty polls of 20 ms.
	start := polls.Load()
	await.For(t, 20*time.Second, func() error {
		if n := polls.Load() - start; n < 20 {
			return fmt.Errorf("%d resyncs", n)
		}
		return nil
	})
	if out := logs.String(); out != "" {
		t.Fatalf("an idle tenant logged:\n%s", out)
	}
}
