package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/logtest"
	"github.com/rankwire/rankwire/internal/natstest"
)

// logBuf collects a Hub's log lines; safe for concurrent use.
type logBuf struct{ logtest.Buffer }

func (l *logBuf) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// streamMsgs returns how many messages tenant's stream holds.
func streamMsgs(t *testing.T, h *Hub, tenant string) uint64 {
	t.Helper()
	return natstest.StreamMsgs(t, h.js, streamName(tenant))
}

// A publish retried after a lost ack (the same event, the same message id,
// sent again) is stored once and applied once: a sum board counts it once.
func TestPublishSameMsgIDAppliesOnce(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "b", Settings{Policy: "sum"})
	r := h.reg.lookup("t1")
	before := streamMsgs(t, h, "t1")
	ev := &ledger.Event{Kind: ledger.EvGroup, At: h.cfg.Now().UnixMilli(), Waiter: h.streams.waiterKey(),
		Groups: []ledger.Group{{Board: "b", Items: []Item{{Member: "p1", Score: 5}}}}}
	data, err := ledger.EncodeEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := h.streams.publish(testCtx(t), r, data, ev.Waiter); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	if got := streamMsgs(t, h, "t1") - before; got != 1 {
		t.Fatalf("stream holds %d new messages after three publishes with one id, want 1", got)
	}
	mustSubmit(t, h, "t1", "b", Item{Member: "p2", Score: 1}) // after the event: read-your-writes
	if got := top(t, h, Loc{Tenant: "t1", Board: "b"}); !slices.Equal(got, []string{"p1:5", "p2:1"}) {
		t.Fatalf("board %v, want p1 once with 5", got)
	}
}

// The stream's duplicate window outlasts the longest retry, or a retry
// past it could store an event twice.
func TestDuplicateWindowCoversWriteTimeout(t *testing.T) {
	h := startHub(t, Config{WriteTimeout: time.Hour})
	if h.cfg.WriteTimeout != MaxWriteTimeout {
		t.Fatalf("WriteTimeout %v, want capped at %v", h.cfg.WriteTimeout, MaxWriteTimeout)
	}
	mustPut(t, h, "t1", "b", Settings{})
	s, err := h.js.Stream(testCtx(t), streamName("t1"))
	if err != nil {
		t.Fatal(err)
	}
	if d := s.CachedInfo().Config.Duplicates; d < 2*MaxWriteTimeout {
		t.Fatalf("duplicate window %v, want at least %v", d, 2*MaxWriteTimeout)
	}
}

// natsServer is a standalone nats-server that a test can stop and start
// again on the same port and store.
type natsServer struct {
	t    *testing.T
	opts server.Options
	s    *server.Server
}

func newNATSServer(t *testing.T, opts server.Options) *natsServer {
	opts.Host, opts.Port, opts.JetStream, opts.NoSigs, opts.NoLog = "127.0.0.1", server.RANDOM_PORT, true, true, true
	opts.StoreDir = t.TempDir()
	n := &natsServer{t: t, opts: opts}
	n.start()
	n.opts.Port = n.s.Addr().(*net.TCPAddr).Port
	t.Cleanup(n.stop)
	return n
}

func (n *natsServer) start() {
	n.t.Helper()
	o := n.opts
	s, err := server.NewServer(&o)
	if err != nil {
		n.t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(startTimeout) {
		n.t.Fatal("nats-server not ready")
	}
	n.s = s
}

// reload applies n.opts to the running server, once h has opened its
// notifications' stream (its first notification tick comes after): a
// stream created while nats-server reloads its options is a data race
// inside the server (it reads them without a lock when adding a stream),
// and that creation is the one request of h's that runs in the background.
func (n *natsServer) reload(h *Hub) {
	n.t.Helper()
	checkFor(n.t, 10*time.Second, func() error {
		if h.note.Passes() == 0 {
			return errors.New("the hub has not opened its notifications' stream yet")
		}
		return nil
	})
	if err := n.s.ReloadOptions(&n.opts); err != nil {
		n.t.Fatal(err)
	}
}

func (n *natsServer) stop() {
	n.s.Shutdown()
	n.s.WaitForShutdown()
}

func (n *natsServer) url(user, pass string) string {
	if user == "" {
		return n.s.ClientURL()
	}
	return fmt.Sprintf("nats://%s:%s@127.0.0.1:%d", user, pass, n.opts.Port)
}

// A NATS outage shorter than WriteTimeout is a slower acknowledgement, not
// an error: the submission waits, is retried with its message id, and
// applies once; the disconnect, reconnect and retries are counted.
func TestSubmitRidesOutANATSRestart(t *testing.T) {
	n := newNATSServer(t, server.Options{})
	var logs logBuf
	h := startHub(t, Config{NATSURL: n.url("", ""), Logger: logs.logger()})
	mustPut(t, h, "t1", "b", Settings{Policy: "sum"})
	mustSubmit(t, h, "t1", "b", Item{Member: "p1", Score: 1})
	n.stop()
	checkFor(t, 5*time.Second, func() error {
		if h.Connected() {
			return errors.New("still connected")
		}
		return nil
	})
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := h.Submit(context.Background(), "t1", "b", []Item{{Member: "p1", Score: 10}})
		done <- err
	}()
	checkFor(t, 5*time.Second, func() error { // the submission is retrying
		if h.NATS().Retries == 0 {
			return errors.New("no retry yet")
		}
		return nil
	})
	n.start()
	back := time.Now()
	if err := <-done; err != nil {
		t.Fatalf("Submit across a NATS restart: %v", err)
	}
	t.Logf("acknowledged after %v, %v after NATS was back", time.Since(start), time.Since(back))
	if got := top(t, h, Loc{Tenant: "t1", Board: "b"}); !slices.Equal(got, []string{"p1:11"}) {
		t.Fatalf("board %v, want p1:11 (applied once)", got)
	}
	// nats.go runs its reconnect callback (counter and log line) on a
	// goroutine of its own: it may come after the acknowledgement.
	checkFor(t, 5*time.Second, func() error {
		st := h.NATS()
		if st.Disconnects == 0 || st.Reconnects == 0 || st.PublishErrors != 0 {
			return fmt.Errorf("stats %+v: want a disconnect, a reconnect and no publish error", st)
		}
		if d, r := logs.Count("NATS disconnected"), logs.Count("NATS reconnected"); d != 1 || r != 1 {
			return fmt.Errorf("log lines: %d disconnected, %d reconnected, want one each", d, r)
		}
		return nil
	})
}

// brokenPerms denies the hub every call that opens or writes tenant
// "broken": its stream is listed but does not answer, as a stream without
// a leader does.
var brokenPerms = &server.Permissions{Publish: &server.SubjectPermission{Deny: []string{
	"$JS.API.STREAM.INFO.RW_broken", "$JS.API.CONSUMER.CREATE.RW_broken", "$JS.API.CONSUMER.CREATE.RW_broken.>",
	"rw.broken.ev",
}}}

func natsUsers(hubPerms *server.Permissions) []*server.User {
	return []*server.User{{Username: "admin", Password: "a"}, {Username: "hub", Password: "h", Permissions: hubPerms}}
}

// A tenant whose stream cannot be opened does not stop Start: the others
// are served, its requests answer unavailable within a second, and it is
// served once its stream answers again, with no restart.
func TestStartServesOtherTenantsWhileOneIsDown(t *testing.T) {
	n := newNATSServer(t, server.Options{Users: natsUsers(brokenPerms)})
	setup := startHub(t, Config{NATSURL: n.url("admin", "a")})
	for _, tenant := range []string{"good", "broken"} {
		mustPut(t, setup, tenant, "b", Settings{})
		mustSubmit(t, setup, tenant, "b", Item{Member: "p1", Score: 1})
	}
	setup.Close()

	start := time.Now()
	var logs logBuf
	h := startHub(t, Config{NATSURL: n.url("hub", "h"), Logger: logs.logger()})
	t.Logf("Start took %v with one tenant down", time.Since(start))
	if h.DownTenants() != 1 {
		t.Fatalf("DownTenants %d, want 1", h.DownTenants())
	}
	mustSubmit(t, h, "good", "b", Item{Member: "p2", Score: 2})
	if got := top(t, h, Loc{Tenant: "good", Board: "b"}); !slices.Equal(got, []string{"p2:2", "p1:1"}) {
		t.Fatalf("good tenant reads %v", got)
	}
	for i := range 5 { // every request, not only the first, answers at once
		t0 := time.Now()
		_, err := h.Submit(testCtx(t), "broken", "b", []Item{{Member: "p1", Score: 9}})
		wantErr(t, err, ErrUnavailable)
		d := time.Since(t0)
		if d > time.Second {
			t.Fatalf("submit %d to the broken tenant answered after %v, want within 1s", i, d)
		}
		t.Logf("submit %d to the broken tenant: 503 after %v", i, d)
	}
	_, err := h.Top(Loc{Tenant: "broken", Board: "b"}, 0, nil, 10)
	wantErr(t, err, ErrUnavailable)
	_, err = h.PutBoard(testCtx(t), "broken", "c", Settings{})
	wantErr(t, err, ErrUnavailable)

	n.opts.Users = natsUsers(nil)
	n.reload(h)
	checkFor(t, 10*time.Second, func() error {
		if h.DownTenants() != 0 {
			return errors.New("broken tenant still down")
		}
		return nil
	})
	checkFor(t, 5*time.Second, func() error { // the line follows the mark's removal
		if logs.Count("tenant unavailable") == 0 || logs.Count("tenant available again") != 1 {
			return fmt.Errorf("want a line per failed attempt and one when back:\n%s", logs.String())
		}
		return nil
	})
	mustSubmit(t, h, "broken", "b", Item{Member: "p2", Score: 3})
	if got := top(t, h, Loc{Tenant: "broken", Board: "b"}); !slices.Equal(got, []string{"p2:3", "p1:1"}) {
		t.Fatalf("broken tenant, back, reads %v", got)
	}
}

// A tenant whose stream is gone answers its writes unavailable at once,
// without retrying for the whole WriteTimeout, while another is served.
func TestDeletedStreamAnswersQuickly(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "good", "b", Settings{})
	mustPut(t, h, "gone", "b", Settings{})
	if err := h.js.DeleteStream(testCtx(t), streamName("gone")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		t0 := time.Now()
		_, err := h.Submit(testCtx(t), "gone", "b", []Item{{Member: "p1", Score: 1}})
		wantErr(t, err, ErrUnavailable)
		d := time.Since(t0)
		if d > time.Second {
			t.Fatalf("submit %d to a deleted stream answered after %v, want within 1s", i, d)
		}
		t.Logf("submit %d to a deleted stream: 503 after %v", i, d)
	}
	mustSubmit(t, h, "good", "b", Item{Member: "p1", Score: 1})
	if st := h.NATS(); st.PublishErrors == 0 {
		t.Fatalf("stats %+v: want publish errors counted", st)
	}
}

// Writable, which /readyz reports, fails with a reason once NATS is
// connected but JetStream does not answer, and recovers with it.
func TestWritableSaysJetStreamDoesNotAnswer(t *testing.T) {
	n := newNATSServer(t, server.Options{Users: natsUsers(nil)})
	h := startHub(t, Config{NATSURL: n.url("hub", "h")})
	if err := h.Writable(testCtx(t)); err != nil {
		t.Fatalf("Writable: %v", err)
	}
	n.opts.Users = natsUsers(&server.Permissions{Publish: &server.SubjectPermission{Deny: []string{"$JS.API.INFO"}}})
	n.reload(h)
	ctx, cancel := context.WithTimeout(testCtx(t), 500*time.Millisecond)
	defer cancel()
	err := h.Writable(ctx)
	wantErr(t, err, ErrUnavailable)
	var he *Error
	if !errors.As(err, &he) || !contains(he.Msg, "JetStream does not answer") || contains(he.Msg, "$JS") {
		t.Fatalf("Writable: %v; want a reason naming JetStream and no subject", err)
	}
	if !h.Connected() {
		t.Fatal("the connection should stay up: only JetStream is unreachable")
	}
	n.opts.Users = natsUsers(nil)
	n.reload(h)
	checkFor(t, 5*time.Second, func() error { return h.Writable(testCtx(t)) })
}

// An open tenant whose log stops answering fails its first write after the
// whole WriteTimeout, then answers within a second while it stays down
// (writable false), without slowing another tenant; its first write that
// succeeds makes it writable again.
func TestOpenTenantThatStopsAnsweringFailsFast(t *testing.T) {
	n := newNATSServer(t, server.Options{Users: natsUsers(nil)})
	h := startHub(t, Config{NATSURL: n.url("hub", "h"), WriteTimeout: 1500 * time.Millisecond})
	for _, tenant := range []string{"good", "broken"} {
		mustPut(t, h, tenant, "b", Settings{})
	}
	n.opts.Users = natsUsers(brokenPerms)
	n.reload(h)
	submitBroken := func() (time.Duration, error) {
		t0 := time.Now()
		_, err := h.Submit(testCtx(t), "broken", "b", []Item{{Member: "p1", Score: 1}})
		return time.Since(t0), err
	}
	d, err := submitBroken()
	wantErr(t, err, ErrUnavailable)
	if d < time.Second {
		t.Fatalf("first write failed after %v: want it retried for the WriteTimeout", d)
	}
	t.Logf("first write: 503 after %v", d)
	for i := range 3 {
		d, err := submitBroken()
		wantErr(t, err, ErrUnavailable)
		if d > time.Second {
			t.Fatalf("write %d while down: 503 after %v, want within 1s", i, d)
		}
		t.Logf("write %d while down: 503 after %v", i, d)
	}
	mustSubmit(t, h, "good", "b", Item{Member: "p1", Score: 1})
	if writable(h, "broken") || !writable(h, "good") {
		t.Fatalf("stats %+v: want broken not writable, good writable", h.Stats())
	}
	n.opts.Users = natsUsers(nil)
	n.reload(h)
	checkFor(t, 10*time.Second, func() error {
		_, err := submitBroken()
		return err
	})
	if !writable(h, "broken") {
		t.Fatal("broken tenant not writable after a write succeeded")
	}
}

func writable(h *Hub, tenant string) bool {
	for _, ts := range h.Stats() {
		if ts.Tenant == tenant {
			return ts.Writable
		}
	}
	return false
}
