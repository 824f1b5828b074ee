package hub

import (
	"errors"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// A region's gateway on a leaf node: a nats-server without JetStream
// whose leafnode connection (authenticated) reaches the central JetStream
// server. The gateway, with NATSURL set to the leaf, creates a tenant,
// submits and reads through it; a gateway on the central server serves
// the same rows and seq.
func TestLeafNodeGateway(t *testing.T) {
	leafPort, _ := strconv.Atoi(freePort(t))
	central, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: t.TempDir(), NoSigs: true, NoLog: true, ServerName: "central", JetStreamDomain: "hub",
		LeafNode: server.LeafNodeOpts{Host: "127.0.0.1", Port: leafPort, Username: "region", Password: "a-leaf-password"}})
	if err != nil {
		t.Fatal(err)
	}
	central.Start()
	t.Cleanup(func() { central.Shutdown(); central.WaitForShutdown() })
	if !central.ReadyForConnections(startTimeout) {
		t.Fatal("central not ready")
	}
	remote, _ := url.Parse("nats://region:a-leaf-password@127.0.0.1:" + strconv.Itoa(leafPort))
	leaf, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true,
		ServerName: "region-leaf", LeafNode: server.LeafNodeOpts{Remotes: []*server.RemoteLeafOpts{{URLs: []*url.URL{remote}}}}})
	if err != nil {
		t.Fatal(err)
	}
	leaf.Start()
	t.Cleanup(func() { leaf.Shutdown(); leaf.WaitForShutdown() })
	if !leaf.ReadyForConnections(startTimeout) {
		t.Fatal("leaf not ready")
	}
	checkFor(t, 10*time.Second, func() error {
		if leaf.NumLeafNodes() != 1 {
			return errorf(ErrUnavailable, "leaf not connected to the central server")
		}
		return nil
	})

	region := startHub(t, Config{NATSURL: leaf.ClientURL(), JSDomain: "hub", WriteTimeout: time.Second})
	mustPut(t, region, "t1", "b", Settings{})
	res := mustSubmit(t, region, "t1", "b", Item{Member: "p1", Score: 7, ID: "x"}, Item{Member: "p2", Score: 9})
	if res[1].Rank != 1 {
		t.Fatalf("results %+v", res)
	}
	home := startHub(t, Config{NATSURL: central.ClientURL()})
	checkFor(t, 10*time.Second, func() error {
		if home.reg.lookup("t1") == nil {
			return errorf(ErrNotFound, "tenant not opened on the central gateway")
		}
		return nil
	})
	if a, b := fingerprint(t, region, "t1"), fingerprint(t, home, "t1"); string(a) != string(b) {
		t.Fatal("the gateway on the leaf and the one on the central server differ")
	}
	if dup := mustSubmit(t, home, "t1", "b", Item{Member: "p1", Score: 7, ID: "x"}); !dup[0].Duplicate {
		t.Fatalf("an id seen through the leaf is not a duplicate centrally: %+v", dup)
	}

	// The region loses the central cluster: its writes answer 503, its
	// reads go on from its own boards.
	central.Shutdown()
	central.WaitForShutdown()
	start := time.Now()
	defer func() { t.Logf("write refused after %v", time.Since(start)) }()
	if _, err := region.Submit(testCtx(t), "t1", "b", []Item{{Member: "p3", Score: 1}}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a write with the central cluster gone: %v, want unavailable", err)
	}
	if got := top(t, region, Loc{Tenant: "t1", Board: "b"}); len(got) != 2 {
		t.Fatalf("reads in the region with the central cluster gone: %v", got)
	}
}
