package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/electhold"
	"github.com/rankwire/rankwire/internal/natsconf"
	"github.com/rankwire/rankwire/internal/natstest"
)

// startMetaCluster starts three embedded servers in-process as one
// cluster (the gateway's own options: natsconf) and returns them once all
// three name the same meta leader, with its system password.
func startMetaCluster(t *testing.T) ([]*server.Server, natsconf.Cluster) {
	t.Helper()
	srvs, c := natstest.Cluster(t, natsconf.Cluster{Name: "bridge", Secret: "a-test-cluster-secret-0123456789"}, 3)
	await.For(t, 60*time.Second, func() error {
		l := metaLeaderOf(srvs[0])
		for _, s := range srvs {
			if got := metaLeaderOf(s); got == "" || got != l {
				return fmt.Errorf("%s sees meta leader %q, %s sees %q", s.Name(), got, srvs[0].Name(), l)
			}
			if s.Name() == l && !s.JetStreamIsLeader() {
				return fmt.Errorf("%s, the meta leader by its Jsz, does not lead yet", l)
			}
			if s.Name() == l {
				return metaCurrent(s)
			}
		}
		return nil
	})
	return srvs, c
}

// metaCurrent says whether the meta leader s has both followers current
// and heard from lately: a step-down names only such a peer (a fresh
// cluster's are not yet).
func metaCurrent(s *server.Server) error {
	info, err := s.Jsz(nil)
	if err != nil || info.Meta == nil {
		return fmt.Errorf("%s: no meta group: %v", s.Name(), err)
	}
	if len(info.Meta.Replicas) != 2 {
		return fmt.Errorf("%s: %d meta followers", s.Name(), len(info.Meta.Replicas))
	}
	for _, r := range info.Meta.Replicas {
		if !r.Current || r.Offline || r.Active > time.Second {
			return fmt.Errorf("%s: meta follower %s not current (%+v)", s.Name(), r.Name, *r)
		}
	}
	return nil
}

func metaLeaderOf(s *server.Server) string {
	info, err := s.Jsz(nil)
	if err != nil || info.Meta == nil {
		return ""
	}
	return info.Meta.Leader
}

// In a bridge, the node acting on it hands the meta leadership to the
// peer that hears everyone where it holds it, through its system
// connection, and counts it; a node that does not hold it asks nothing.
func TestBridgeHandsMetaOn(t *testing.T) {
	srvs, c := startMetaCluster(t)
	leader := metaLeaderOf(srvs[0])
	watch := func(s *server.Server) *peerWatch {
		sys, err := openClusterSystem(s, c, "test")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sys.close)
		return &peerWatch{node: s.Name(), view: newStreamView(s), sys: sys, log: slog.New(slog.NewTextHandler(t.Output(), nil))}
	}
	for _, s := range srvs {
		if s.Name() == leader {
			continue
		}
		w := watch(s)
		w.handOnMeta(context.Background(), leader)
		if w.meta != 0 || metaLeaderOf(s) != leader {
			t.Fatalf("%s, not the meta leader, handed on %d; meta leader %q, want %q still", s.Name(), w.meta, metaLeaderOf(s), leader)
		}
	}
	// To the one it names: Raft's own choice would be any peer, the one cut
	// off among them.
	var others []string
	for _, s := range srvs {
		if s.Name() != leader {
			others = append(others, s.Name())
		}
	}
	for _, s := range srvs {
		if s.Name() != leader {
			continue
		}
		via := others[len(others)-1]
		w := watch(s)
		ctx, cancel := context.WithTimeout(context.Background(), bridgeEvery)
		defer cancel()
		w.handOnMeta(ctx, via)
		if w.meta != 1 {
			t.Fatalf("the meta leader %s handed on %d times, want 1", leader, w.meta)
		}
		// The transfer to the one named is Raft's best effort: a target that
		// does not take over in time leaves an election (seen once in ten on a
		// loaded machine), which any peer heard lately may win.
		// handOnMeta waits for the new leader within the bridge's period; on
		// a loaded machine the election may end after it: await it.
		var now string
		await.For(t, 15*time.Second, func() error {
			if now = metaLeaderOf(s); now == "" || now == leader {
				return fmt.Errorf("meta leader %q after the step-down of %s to %s", now, leader, via)
			}
			return nil
		})
		if now != via {
			t.Logf("meta leader %s, not %s, after the step-down of %s: an election", now, via, leader)
		}
	}
}

// In a bridge, the stream leader hands each stream it leads to the peer
// named, not to Raft's choice (any peer heard lately: the cut one too).
func TestBridgeHandsStreamsToThePeerNamed(t *testing.T) {
	srvs, c := startMetaCluster(t)
	byName := map[string]*server.Server{}
	for _, s := range srvs {
		byName[s.Name()] = s
	}
	st, leader := bridgedStream(t, srvs, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := byName[leader]
	var via string
	for _, o := range srvs {
		if o.Name() != leader {
			via = o.Name() // the last of the others: Raft's own pick is either
		}
	}
	lnc := clusterConn(t, c, s)
	w := &peerWatch{node: leader, view: newStreamView(s), log: slog.New(slog.NewTextHandler(t.Output(), nil))}
	w.handOn(ctx, lnc, via, nil)
	if w.moved != 1 {
		t.Fatalf("%s handed on %d streams, want 1", leader, w.moved)
	}
	await.For(t, 10*time.Second, func() error {
		// Each look its own deadline: a JetStream request during the
		// election otherwise waits out the whole test's context.
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		defer acancel()
		info, err := st.Info(actx)
		if err != nil || info.Cluster == nil || info.Cluster.Leader == leader || info.Cluster.Leader == "" {
			return fmt.Errorf("no new leader yet: %v", err)
		}
		if info.Cluster.Leader != via {
			t.Fatalf("stream leader %s after the handover from %s to %s", info.Cluster.Leader, leader, via)
		}
		return nil
	})
}

// A handover that finds a stream of this node's without a leader (the cut
// follower's election deposed the leader before the handover) says so,
// so the next is tried at the next beat rather than bridgeEvery later:
// this node may win that election; one whose streams all have a leader
// elsewhere waits bridgeEvery.
func TestBridgeRetriesSoonWhileAStreamIsLeaderless(t *testing.T) {
	srvs, c := startMetaCluster(t)
	_, leader := bridgedStream(t, srvs, c)
	_, fs := leaderAndFollowers(srvs, leader)
	f := fs[len(fs)-1]
	nc := clusterConn(t, c, f)
	w := &peerWatch{node: f.Name(), view: newStreamView(f), log: slog.New(slog.NewTextHandler(t.Output(), nil))}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if w.handOn(ctx, nc, leader, nil) || w.moved != 0 {
		t.Fatalf("a follower of a led stream: leaderless reported or %d moved", w.moved)
	}
	if w.bridgeDue(bridgeSoon) || !w.bridgeDue(bridgeEvery) {
		t.Fatal("without a leaderless stream the next handover is due only bridgeEvery later")
	}
	for _, s := range srvs {
		if s != f {
			s.Shutdown()
		}
	}
	await.For(t, 20*time.Second, func() error {
		info, err := w.view.streams() // what handOn reads: the server's streams as of a beat ago at most
		if err != nil {
			return err
		}
		for _, a := range info.AccountDetails {
			for _, s := range a.Streams {
				if s.Name == "BRIDGED" && s.Cluster != nil && s.Cluster.Leader != "" {
					return fmt.Errorf("%s still sees leader %q", f.Name(), s.Cluster.Leader)
				}
			}
		}
		return nil
	})
	w.handSoon.Store(w.handOn(ctx, nc, leader, nil))
	if !w.handSoon.Load() || w.moved != 0 {
		t.Fatalf("a stream without a leader not reported (moved %d)", w.moved)
	}
	if w.bridgeDue(bridgeSoon-time.Millisecond) || !w.bridgeDue(bridgeSoon) {
		t.Fatal("with a leaderless stream the next handover is due at the next beat")
	}
}

// At the other end of a bridge, the follower that no longer hears its
// stream's leader (relayed: heard by another) holds its replica of the
// stream's group back from elections, and of the meta group where that
// peer leads it too, and lets them elect again once the leader is no
// longer relayed; a peer that leads nothing here holds nothing.
func TestRelayedLeadersGroupsHeldBack(t *testing.T) {
	srvs, c := startMetaCluster(t)
	st, leader := bridgedStream(t, srvs, c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, fs := leaderAndFollowers(srvs, leader)
	f, other := fs[0], fs[1].Name() // the follower cut from leader, the one that hears both
	w := &peerWatch{node: f.Name(), view: newStreamView(f), hold: electhold.New(f), log: slog.New(slog.NewTextHandler(t.Output(), nil))}
	w.holdBack([]string{other}) // leads neither the stream nor (unless it does) the meta group
	for _, g := range w.hold.Held() {
		if g == info.Cluster.RaftGroup {
			t.Fatalf("%s held the stream led by %s for relayed %s", f.Name(), leader, other)
		}
	}
	w.holdBack(nil)
	w.holdBack([]string{leader})
	if held := w.hold.Held(); !slices.Contains(held, info.Cluster.RaftGroup) {
		t.Fatalf("%s holds %v, want the stream's group %s: its leader %s is relayed", f.Name(), held, info.Cluster.RaftGroup, leader)
	}
	if meta := metaLeaderOf(f); (meta == leader) != slices.Contains(w.hold.Held(), electhold.MetaGroup) {
		t.Fatalf("meta leader %s, relayed %s: held %v", meta, leader, w.hold.Held())
	}
	if w.holds < 1 {
		t.Fatalf("holds counted %d, want at least 1", w.holds)
	}
	w.holdBack(nil)
	if held := w.hold.Held(); len(held) != 0 {
		t.Fatalf("nothing relayed: still holding %v", held)
	}
}
