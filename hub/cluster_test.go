package hub

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/rankwire/rankwire/internal/natstest"
	"github.com/rankwire/rankwire/internal/testport"
)

const testSecret = "a-cluster-secret-of-some-length"

// startClusterNode starts the embedded server as one node of a cluster,
// with a route listener and a client listener on free loopback ports. (A
// lone node's JetStream elects no meta leader, so this starts the server,
// not a Hub.)
func startClusterNode(t *testing.T) *server.Server {
	t.Helper()
	port := freePort(t)
	s, err := startEmbedded(Config{DataDir: t.TempDir(), Cluster: Cluster{Node: "n1", Name: "c", Listen: "127.0.0.1:" + port,
		Routes: []string{"nats://127.0.0.1:" + port}, Secret: testSecret, ClientListen: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

// freePort returns a loopback TCP port free a moment ago, below the
// ephemeral range (see internal/testport).
func freePort(t *testing.T) string {
	t.Helper()
	return strconv.Itoa(testport.Free(t))
}

// rawConnect speaks the NATS protocol on addr: reads INFO, sends CONNECT
// with user and pass, then PING, and returns the first line answered.
func rawConnect(t *testing.T, addr, user, pass string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("want INFO, got %q, %v", line, err)
	}
	connect, _ := json.Marshal(map[string]any{"user": user, "pass": pass, "verbose": false, "pedantic": false, "name": "probe", "cluster": "c"})
	if _, err := c.Write([]byte("CONNECT " + string(connect) + "\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return "closed: " + err.Error()
		}
		if strings.HasPrefix(line, "PONG") || strings.HasPrefix(line, "-ERR") {
			return strings.TrimSpace(line)
		}
	}
}

// The route port refuses a connection without the secret's route
// password, or with the client password, and takes one with it.
func TestClusterRoutePortNeedsSecret(t *testing.T) {
	addr := startClusterNode(t).ClusterAddr().String()
	for _, tc := range []struct{ user, pass string }{
		{"", ""},
		{RouteUser, "wrong"},
		{RouteUser, RoutePassword("another-secret-of-length")},
		{ClientUser, ClientPassword(testSecret)}, // a client's password does not open a route
	} {
		if got := rawConnect(t, addr, tc.user, tc.pass); !strings.Contains(got, "Authorization Violation") {
			t.Errorf("route port with user %q: got %q, want Authorization Violation", tc.user, got)
		}
	}
	if got := rawConnect(t, addr, RouteUser, RoutePassword(testSecret)); strings.Contains(got, "Authorization") {
		t.Errorf("route port with the secret: got %q, want past authorization", got)
	} else {
		t.Logf("route port with the secret: %q", got)
	}
}

// The client listener (--nats-listen) refuses a client without the
// password derived from the secret; with it, the client reaches JetStream.
func TestClusterClientPortNeedsSecret(t *testing.T) {
	url := "nats://" + startClusterNode(t).Addr().String()
	for _, opt := range []nats.Option{
		nats.Name("none"),
		nats.UserInfo(ClientUser, "wrong"),
		nats.UserInfo(RouteUser, RoutePassword(testSecret)),
	} {
		nc, err := nats.Connect(url, opt, nats.MaxReconnects(0))
		if err == nil {
			nc.Close()
			t.Fatalf("client port: connected without the client password")
		}
		if !errors.Is(err, nats.ErrAuthorization) && !strings.Contains(strings.ToLower(err.Error()), "authorization") {
			t.Errorf("client port: got %v, want an authorization error", err)
		}
	}
	nc, err := nats.Connect(url, nats.UserInfo(ClientUser, ClientPassword(testSecret)))
	if err != nil {
		t.Fatalf("client port with the secret: %v", err)
	}
	defer nc.Close()
	if err := nc.Flush(); err != nil {
		t.Fatalf("client port with the secret: %v", err)
	}
}

// Without cluster settings the embedded server opens no port at all.
func TestNoClusterNoPort(t *testing.T) {
	h := startHub(t, Config{})
	if h.srv.ClusterAddr() != nil || h.srv.Addr() != nil {
		t.Fatalf("ports open without cluster settings: cluster %v, client %v", h.srv.ClusterAddr(), h.srv.Addr())
	}
}

// Bad cluster settings fail Start with ErrClusterConfig, naming the field;
// the secret never appears in the message.
func TestClusterConfigRefused(t *testing.T) {
	for name, c := range map[string]Cluster{
		"no secret":       {Name: "c", Listen: "127.0.0.1:0", Routes: []string{"nats://127.0.0.1:1"}},
		"no routes":       {Name: "c", Listen: "127.0.0.1:0", Secret: testSecret},
		"routes alone":    {Routes: []string{"nats://127.0.0.1:1"}, Secret: testSecret},
		"bad route":       {Name: "c", Listen: "127.0.0.1:0", Secret: testSecret, Routes: []string{"http://x:1"}},
		"creds in route":  {Name: "c", Listen: "127.0.0.1:0", Secret: testSecret, Routes: []string{"nats://u:p@x:1"}},
		"bad listen":      {Name: "c", Listen: "nohost", Secret: testSecret, Routes: []string{"nats://127.0.0.1:1"}},
		"client, no auth": {ClientListen: "127.0.0.1:0"},
	} {
		_, err := startEmbedded(Config{DataDir: t.TempDir(), Cluster: c})
		if !errors.Is(err, ErrClusterConfig) {
			t.Errorf("%s: got %v, want ErrClusterConfig", name, err)
		}
		if err != nil && strings.Contains(err.Error(), testSecret) {
			t.Errorf("%s: the error holds the secret: %v", name, err)
		}
	}
}

// Config.Sync reaches the embedded JetStream: zero (the default) and
// SyncAlways fsync before every ack; an interval, SyncLazy among them, is
// the opt-out.
func TestSyncPolicy(t *testing.T) {
	for _, tc := range []struct {
		sync     time.Duration
		always   bool
		interval time.Duration
	}{{0, true, 2 * time.Minute}, {SyncAlways, true, 2 * time.Minute}, {time.Second, false, time.Second},
		{SyncLazy, false, 2 * time.Minute}} { // NATS keeps its 2 min interval under always
		s, err := startEmbedded(Config{DataDir: t.TempDir(), Sync: tc.sync})
		if err != nil {
			t.Fatal(err)
		}
		got := s.JetStreamConfig()
		s.Shutdown()
		if got.SyncAlways != tc.always || got.SyncInterval != tc.interval {
			t.Errorf("Sync %v: JetStream SyncAlways %v SyncInterval %v", tc.sync, got.SyncAlways, got.SyncInterval)
		}
	}
}

// A Hub with NATSURL and the cluster secret logs in to a server that asks
// for the secret's client password (a node's --nats-listen); without the
// secret, or with another, it is refused.
func TestExternalWithClusterSecret(t *testing.T) {
	s := natstest.ServerWith(t, func(o *server.Options) { o.Username, o.Password = ClientUser, ClientPassword(testSecret) })
	url := "nats://" + s.Addr().String()
	for _, secret := range []string{"", "another-secret-of-length"} {
		h, err := Start(testCtx(t), Config{DataDir: t.TempDir(), NATSURL: url, Cluster: Cluster{Secret: secret}})
		if err == nil {
			h.Close()
			t.Fatalf("secret %q: connected", secret)
		}
	}
	startHub(t, Config{NATSURL: url, Cluster: Cluster{Secret: testSecret}})
}
