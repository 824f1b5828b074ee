package electhold

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/natsconf"
	"github.com/rankwire/rankwire/internal/natstest"
)

// A follower held back does not campaign even when told to at once (its
// election timer running out does the same), and its group keeps its
// leader and term; released, the same call makes it campaign and lead: so
// the hold, not chance, kept it out. The leader itself and an unknown
// group are not held; Set releases only what it held.
func TestHeldFollowerDoesNotCampaign(t *testing.T) {
	srvs, js, ctx := ledCluster(t)
	var st jetstream.Stream
	await.For(t, 30*time.Second, func() (err error) {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		st, err = js.CreateStream(actx, jetstream.StreamConfig{Name: "HELD", Subjects: []string{"held"}, Replicas: 3})
		return err
	})
	var group, leader string
	await.For(t, 30*time.Second, func() error {
		info, err := st.Info(ctx)
		if err != nil || info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
			return fmt.Errorf("no leader and two followers yet: %v", err)
		}
		for _, r := range info.Cluster.Replicas {
			if !r.Current {
				return fmt.Errorf("follower %s not current", r.Name)
			}
		}
		group, leader = info.Cluster.RaftGroup, info.Cluster.Leader
		return nil
	})
	var f, l *server.Server
	for _, s := range srvs {
		if s.Name() == leader {
			l = s
		} else {
			f = s
		}
	}
	if held, _ := New(l).Set([]string{group}); held != nil {
		t.Fatalf("the leader held %v, want nothing: a leader does not campaign", held)
	}
	h := New(f)
	if held, _ := h.Set([]string{group, "no-such-group"}); !slices.Equal(held, []string{group}) || !slices.Equal(h.Held(), []string{group}) {
		t.Fatalf("Set held %v (Held %v), want [%s] only", held, h.Held(), group)
	}
	n := lookupRaftNode(f, group)
	if err := n.CampaignImmediately(); err != nil {
		t.Fatal(err)
	}
	// Its campaign would start 50 ms after the call and win in a few (its
	// log is as long as any: the stream is idle): it must not lead for ten
	// times that. (Another member's election, on a starved machine, may
	// change the term meanwhile: only this one's leading is asserted.)
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if n.Leader() || n.GroupLeader() == n.ID() {
			t.Fatalf("held follower %s leads (term %d): it campaigned", f.Name(), n.Term())
		}
	}
	if _, released := h.Set(nil); !slices.Equal(released, []string{group}) || n.IsObserver() {
		t.Fatalf("Set(nil) released %v, observer %v; want [%s] released", released, n.IsObserver(), group)
	}
	if err := n.CampaignImmediately(); err != nil {
		t.Fatal(err)
	}
	await.For(t, 10*time.Second, func() error {
		if !n.Leader() {
			return fmt.Errorf("released follower %s not leading after its campaign (term %d)", f.Name(), n.Term())
		}
		return nil
	})
	forgetsAStoppedGroup(t, ctx, js, srvs, f, group)
}

// forgetsAStoppedGroup holds group on a follower other than leader, then
// deletes the stream: its Raft node stops, and Set, no longer asked for
// it, forgets it (nothing to release) rather than keep it held.
func forgetsAStoppedGroup(t *testing.T, ctx context.Context, js jetstream.JetStream, srvs []*server.Server, leader *server.Server, group string) {
	t.Helper()
	var f *server.Server
	await.For(t, 10*time.Second, func() error {
		for _, s := range srvs {
			if n := lookupRaftNode(s, group); s != leader && n != nil && !n.Leader() {
				f = s
				return nil
			}
		}
		return fmt.Errorf("no follower of %s", group)
	})
	h := New(f)
	if held, _ := h.Set([]string{group}); !slices.Equal(held, []string{group}) {
		t.Fatalf("Set held %v, want [%s]", held, group)
	}
	if err := js.DeleteStream(ctx, "HELD"); err != nil {
		t.Fatal(err)
	}
	await.For(t, 10*time.Second, func() error {
		if lookupRaftNode(f, group) != nil {
			return fmt.Errorf("%s still runs %s", f.Name(), group)
		}
		return nil
	})
	if _, released := h.Set(nil); released != nil || len(h.Held()) != 0 {
		t.Fatalf("after the group stopped: released %v, held %v; want both empty", released, h.Held())
	}
}

// ledCluster runs a three-node embedded cluster, awaits its meta leader
// (metaLed) and returns its servers, a JetStream client of the first and
// a context that ends with the test, within a minute.
func ledCluster(t *testing.T) ([]*server.Server, jetstream.JetStream, context.Context) {
	t.Helper()
	srvs, c := natstest.Cluster(t, natsconf.Cluster{Name: "hold", Secret: "a-test-cluster-secret-0123456789"}, 3)
	_, js := natstest.Connect(t, srvs[0], append(natsconf.AuthOptions(c, natsconf.NATSAuth{}, true), nats.InProcessServer(srvs[0]))...)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	metaLed(t, srvs)
	return srvs, js, ctx
}

// metaLed awaits a meta leader that every server of srvs names, and
// heard from every follower lately (placing three replicas needs it).
func metaLed(t *testing.T, srvs []*server.Server) {
	t.Helper()
	await.For(t, 60*time.Second, func() error {
		var leader server.RaftNode
		for _, s := range srvs {
			if m := lookupRaftNode(s, MetaGroup); m != nil && m.Leader() {
				leader = m
			}
		}
		if leader == nil {
			return fmt.Errorf("no meta leader yet")
		}
		for _, s := range srvs {
			m := lookupRaftNode(s, MetaGroup)
			if m == nil || m.GroupLeader() != leader.ID() {
				return fmt.Errorf("%s does not name the meta leader yet", s.Name())
			}
			if m != leader && time.Since(leader.LastHeardFromFollower(m.ID())) > time.Second {
				return fmt.Errorf("meta follower %s not heard lately", s.Name())
			}
		}
		return nil
	})
}

// A group made an observer by someone else (nats-server's lame duck mode)
// is neither taken over nor released.
func TestHoldLeavesOthersObservers(t *testing.T) {
	srvs, _, _ := ledCluster(t)
	var n server.RaftNode
	var s *server.Server
	await.For(t, 30*time.Second, func() error {
		for _, x := range srvs {
			if m := lookupRaftNode(x, MetaGroup); m != nil && !m.Leader() && m.GroupLeader() != "" {
				n, s = m, x
				return nil
			}
		}
		return fmt.Errorf("no meta follower with a leader yet")
	})
	n.SetObserver(true)
	h := New(s)
	if held, _ := h.Set([]string{MetaGroup}); held != nil {
		t.Fatalf("held %v, want nothing: already an observer", held)
	}
	if _, released := h.Set(nil); released != nil || !n.IsObserver() {
		t.Fatalf("released %v, observer %v: another's observer released", released, n.IsObserver())
	}
}

// A held group whose Raft node nats-server replaced under the same name
// (the stream scaled to two replicas, this one removed, and back to
// three: a new node here) is not taken for the one held: Set, still asked
// for it, holds the new node, and releases that one.
func TestHoldFollowsAReplacedNode(t *testing.T) {
	srvs, js, ctx := ledCluster(t)
	cfg := jetstream.StreamConfig{Name: "MOVED", Subjects: []string{"moved"}, Replicas: 3}
	var group string
	await.For(t, 30*time.Second, func() error {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		st, err := js.CreateStream(actx, cfg)
		if err != nil {
			return err
		}
		info, err := st.Info(actx)
		if err != nil || info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
			return fmt.Errorf("no leader and two followers yet: %v", err)
		}
		group = info.Cluster.RaftGroup
		return nil
	})
	// Every follower held, each by its own Holder: whichever replica the
	// scale-down removes was held.
	holders := map[*server.Server]*Holder{}
	old := map[*server.Server]server.RaftNode{}
	for _, s := range srvs {
		if n := lookupRaftNode(s, group); n != nil && !n.Leader() {
			h := New(s)
			if held, _ := h.Set([]string{group}); !slices.Equal(held, []string{group}) {
				t.Fatalf("%s held %v, want [%s]", s.Name(), held, group)
			}
			holders[s], old[s] = h, n
		}
	}
	if len(holders) != 2 {
		t.Fatalf("%d followers held, want 2", len(holders))
	}
	scale := func(r int) {
		cfg.Replicas = r
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			t.Fatalf("scale to %d: %v", r, err)
		}
	}
	scale(2)
	var moved *server.Server
	await.For(t, 30*time.Second, func() error {
		for s := range holders {
			if lookupRaftNode(s, group) == nil {
				moved = s
				return nil
			}
		}
		return fmt.Errorf("no held follower's replica removed yet")
	})
	scale(3)
	var n server.RaftNode
	await.For(t, 30*time.Second, func() error {
		// A new node observes (scale-up) until its leader adds it.
		if n = lookupRaftNode(moved, group); n == nil || n == old[moved] || n.IsObserver() || n.GroupLeader() == "" {
			return fmt.Errorf("no new follower of %s on %s yet", group, moved.Name())
		}
		return nil
	})
	h := holders[moved]
	if held, released := h.Set([]string{group}); !slices.Equal(held, []string{group}) || released != nil || !n.IsObserver() {
		t.Fatalf("the replaced node: held %v, released %v, observer %v; want held [%s] anew", held, released, n.IsObserver(), group)
	}
	if _, released := h.Set(nil); !slices.Equal(released, []string{group}) || n.IsObserver() {
		t.Fatalf("released %v, observer %v; want the new node released", released, n.IsObserver())
	}
	for _, h := range holders {
		h.Set(nil)
	}
}
