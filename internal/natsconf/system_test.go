package natsconf

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/certtest"
	"github.com/rankwire/rankwire/internal/testport"
)

const sysPass = "the-system-password-of-this-process"

// startNode runs a three-node embedded cluster in this process (a
// JetStream cluster of one elects no meta leader), each node with a client
// listener, TLS where tlsc names a certificate, stores under store, and
// returns the first node, its options as nats-server left them and its
// client URL, once a meta leader is elected.
func startNode(t *testing.T, store string, system string, tlsc ClientTLS) (*server.Server, *server.Options, string) {
	t.Helper()
	ns := startNodes(t, store, Cluster{Secret: secret, ClientTLS: tlsc, System: system}, nil)
	return ns[0].s, ns[0].o, ns[0].url
}

// node is one server of startNodes.
type node struct {
	s   *server.Server
	o   *server.Options
	url string // its client listener
}

// startNodes runs three nodes of cluster c (Name, Node, Listen, Routes and
// ClientListen set here) on stores under store, edit (where not nil)
// changing each node's options first, and waits for a meta leader.
func startNodes(t *testing.T, store string, c Cluster, edit func(*server.Options)) []node {
	t.Helper()
	var routes, listens []string
	for range 3 {
		listens = append(listens, "127.0.0.1:"+strconv.Itoa(testport.Free(t)))
		routes = append(routes, "nats://"+listens[len(listens)-1])
	}
	var out []node
	for i := range 3 {
		c := c
		c.Node, c.Name, c.Listen, c.Routes = "n"+strconv.Itoa(i+1), "c", listens[i], routes
		c.ClientListen = "127.0.0.1:" + strconv.Itoa(testport.Free(t))
		o, err := ServerOptions(Embedded{StoreDir: filepath.Join(store, strconv.Itoa(i)), Cluster: c})
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(o)
		}
		out = append(out, node{s: runServer(t, o), o: o, url: "nats://" + c.ClientListen})
	}
	deadline := time.Now().Add(30 * time.Second)
	for !metaFormed(out) {
		if time.Now().After(deadline) {
			t.Fatal("no meta leader with every peer current after 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return out
}

// metaFormed reports whether one of ns leads the meta group and sees the
// two others current (JetStream places replicas only on those).
func metaFormed(ns []node) bool {
	for _, n := range ns {
		if !n.s.JetStreamIsLeader() {
			continue
		}
		info, err := n.s.Jsz(nil)
		if err != nil || info.Meta == nil || len(info.Meta.Replicas) != len(ns)-1 {
			return false
		}
		for _, p := range info.Meta.Replicas {
			if !p.Current || p.Offline {
				return false
			}
		}
		return true
	}
	return false
}

// runServer starts the server of o (its log on stderr with NATSLOG set).
func runServer(t *testing.T, o *server.Options) *server.Server {
	t.Helper()
	o.NoLog = os.Getenv("NATSLOG") == ""
	s, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	s.ConfigureLogger()
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() }) // a no-op where the test shut it down
	if !s.ReadyForConnections(30 * time.Second) {
		t.Fatal("not ready")
	}
	return s
}

// connectTCP dials url with opts; it fails where the server refuses.
func connectTCP(url string, opts ...nats.Option) (*nats.Conn, error) {
	return nats.Connect(url, append([]nats.Option{nats.Timeout(5 * time.Second), nats.NoReconnect()}, opts...)...)
}

// The system account is the in-process system user's alone: over the
// client listener nothing connects without the client password (no
// password-less user exists, on any account), the system user is refused
// even with its password, and the client user reaches JetStream on the
// global account but neither the system account's subjects nor the
// system-only JetStream requests. In-process, the system user gets
// answers to them.
func TestSystemAccountInProcessOnly(t *testing.T) {
	s, o, url := startNode(t, t.TempDir(), sysPass, ClientTLS{})
	if o.NoAuthUser != "" || len(o.Users) != 2 {
		t.Fatalf("nats-server added users: no_auth_user %q, %d users", o.NoAuthUser, len(o.Users))
	}
	refusedTCP(t, url)
	clientCannotReachSystem(t, url)
	inProcessRefused(t, s, `{"verbose":false}`)
	inProcessRefused(t, s, `{"verbose":false,"user":"`+SystemUser+`"}`)
	nc, err := nats.Connect("", nats.InProcessServer(s), SystemAuth(Cluster{System: sysPass}))
	if err != nil {
		t.Fatalf("the system user in-process: %v", err)
	}
	defer nc.Close()
	if _, err := nc.Request("$SYS.REQ.SERVER.PING", nil, 5*time.Second); err != nil {
		t.Errorf("the system user in-process: $SYS ping: %v", err)
	}
	// A system-only JetStream request, answered (with an error: no such peer).
	m, err := nc.Request("$JS.API.SERVER.REMOVE", []byte(`{"peer":"nobody"}`), 5*time.Second)
	if err != nil {
		t.Fatalf("the system user in-process: peer removal: %v", err)
	}
	if !strings.Contains(string(m.Data), "error") {
		t.Errorf("removing no peer: %s", m.Data)
	}
}

// The same over a TLS client listener.
func TestSystemAccountInProcessOnlyTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key, pool := certtest.SelfSigned(t, dir)
	_, _, url := startNode(t, t.TempDir(), sysPass, ClientTLS{Cert: cert, Key: key})
	secure := nats.Secure(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	if nc, err := connectTCP(url, nats.UserInfo(ClientUser, ClientPassword(secret))); err == nil {
		nc.Close()
		t.Error("a plain client connected to the TLS listener")
	}
	refusedTCP(t, url, secure)
	clientCannotReachSystem(t, url, secure)
}

// inProcessRefused checks that s refuses an in-process connection that
// says connect (its JSON), on the wire protocol (nats.go, refused
// in-process, notices only after 40 s).
func inProcessRefused(t *testing.T, s *server.Server, connect string) {
	t.Helper()
	c, err := s.InProcessConn()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = c.Write([]byte("CONNECT " + connect + "\r\nPING\r\n")) }()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("in-process %s: no answer: %v", connect, err)
		}
		switch {
		case strings.HasPrefix(line, "-ERR") && strings.Contains(line, "Authorization Violation"):
			return
		case strings.HasPrefix(line, "PONG"):
			t.Fatalf("in-process %s: let in", connect)
		}
	}
}

// refusedTCP checks that url refuses every client but the one with the
// client password.
func refusedTCP(t *testing.T, url string, extra ...nats.Option) {
	t.Helper()
	for name, auth := range map[string][]nats.Option{
		"no credentials":                  nil,
		"the client user, no password":    {nats.UserInfo(ClientUser, "")},
		"the client user, wrong password": {nats.UserInfo(ClientUser, "wrong")},
		"the system user, no password":    {nats.UserInfo(SystemUser, "")},
		"the system user, its password":   {SystemAuth(Cluster{System: sysPass})},
		"a token":                         {nats.Token(ClientPassword(secret))},
	} {
		nc, err := connectTCP(url, append(extra, auth...)...)
		if err == nil {
			nc.Close()
			t.Errorf("%s: connected over the client listener", name)
		} else if !errors.Is(err, nats.ErrAuthorization) && !errors.Is(err, nats.ErrConnectionClosed) {
			t.Logf("%s: %v", name, err)
		}
	}
}

// clientCannotReachSystem checks that the client user reaches JetStream
// on the global account and nothing of the system account's.
func clientCannotReachSystem(t *testing.T, url string, extra ...nats.Option) {
	t.Helper()
	nc, err := connectTCP(url, append(extra, nats.UserInfo(ClientUser, ClientPassword(secret)))...)
	if err != nil {
		t.Fatalf("the client user with its password: %v", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		t.Fatalf("the client user: JetStream on the global account: %v", err)
	}
	for _, subj := range []string{"$SYS.REQ.SERVER.PING", "$SYS.REQ.SERVER.PING.JSZ", "$JS.API.META.LEADER.STEPDOWN",
		"$JS.API.SERVER.REMOVE", "$JS.API.SERVER.STREAM_MOVE", "$JS.API.ACCOUNT.PURGE.$G"} {
		m, err := nc.Request(subj, []byte(`{"peer":"n1"}`), 500*time.Millisecond)
		if err == nil {
			t.Errorf("the client user: %s answered: %s", subj, m.Data)
		}
	}
}

// withoutSystemUser undoes systemAccountOptions: the options of a node
// before the system account had a user (one client user on the global
// account, nats-server's default system account).
func withoutSystemUser(o *server.Options) {
	o.Accounts, o.SystemAccount, o.Users = nil, "", nil
	o.Username, o.Password = ClientUser, ClientPassword(secret)
}

// A cluster whose stores were written before the system account had a
// user opens them unchanged: the replicated stream, its messages and its
// placement are there, under the same paths (the streams in the global
// account's directory, the Raft logs under $SYS's).
func TestSystemAccountUpgrade(t *testing.T) {
	store := t.TempDir()
	old := startNodes(t, store, Cluster{Secret: secret}, withoutSystemUser)
	nc, err := connectTCP(old[0].url, nats.UserInfo(ClientUser, ClientPassword(secret)))
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The meta leader places three replicas only once it has heard every
	// peer's state, which can come after the peers are current ("no
	// suitable peers for placement" before).
	await.For(t, 30*time.Second, func() error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "RW_t1", Subjects: []string{"rw.t1.>"}, Replicas: 3})
		return err
	})
	for i := range 10 {
		if _, err := js.Publish(ctx, "rw.t1.x", []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	nc.Close()
	for _, n := range old {
		n.s.Shutdown()
		n.s.WaitForShutdown()
	}
	for _, p := range []string{"jetstream/$G/streams/RW_t1", "jetstream/$SYS/_js_/_meta_"} {
		if _, err := os.Stat(filepath.Join(store, "0", p)); err != nil {
			t.Fatalf("before the upgrade: %v", err)
		}
	}
	restarted := startNodes(t, store, Cluster{Secret: secret, System: sysPass}, nil)
	nc, err = connectTCP(restarted[0].url, nats.UserInfo(ClientUser, ClientPassword(secret)))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if js, err = jetstream.New(nc); err != nil {
		t.Fatal(err)
	}
	var info *jetstream.StreamInfo
	deadline := time.Now().Add(30 * time.Second)
	for {
		sctx, scancel := context.WithTimeout(ctx, 2*time.Second) // a stream without a leader yet answers nothing
		s, err := js.Stream(sctx, "RW_t1")
		scancel()
		if err == nil {
			info = s.CachedInfo()
			if info.Cluster != nil && info.Cluster.Leader != "" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("RW_t1 after the upgrade: %v %+v", err, info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if info.State.Msgs != 10 || info.Config.Replicas != 3 || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("RW_t1 after the upgrade: %d messages, R%d, %d other replicas; want 10, R3, 2",
			info.State.Msgs, info.Config.Replicas, len(info.Cluster.Replicas))
	}
	entries, err := os.ReadDir(filepath.Join(store, "0", "jetstream"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "$G,$SYS" {
		t.Errorf("the store's account directories after the upgrade: %v, want $G and $SYS", names)
	}
}
