package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/readiness"
)

// A follower of a real three-replica stream counts itself and the
// replicas it hears, of three, whether the group has a leader (the server
// lists the others) or not (it lists this node too).
func TestReplicaReachCountsWhomThisNodeHears(t *testing.T) {
	srvs, c := startMetaCluster(t)
	_, leader := bridgedStream(t, srvs, c)
	_, fs := leaderAndFollowers(srvs, leader)
	f, others := fs[0], []string{leader, fs[1].Name()} // a follower, and the others: the leader and the other follower
	w := &peerWatch{node: f.Name(), view: newStreamView(f)}
	for _, tc := range []struct {
		hears []string
		want  replicaCount
	}{{nil, replicaCount{1, 3}}, {[]string{leader}, replicaCount{2, 3}}, {others, replicaCount{3, 3}}} {
		w.hears = tc.hears
		if got := reachOf(w); got != tc.want {
			t.Fatalf("hearing %v: %+v, want %+v", tc.hears, got, tc.want)
		}
	}
	// The reading remembered the led stream's members: the leader, this
	// node and the third replica.
	if got := w.view.membersOf("BRIDGED"); len(got) != 3 || got[0] != leader || !slices.Contains(got, f.Name()) {
		t.Fatalf("remembered %v, want the leader %s first and all 3 replicas", got, leader)
	}
	for _, s := range srvs {
		if s != f {
			s.Shutdown()
		}
	}
	w.hears = nil
	await.For(t, 30*time.Second, func() error {
		if got := reachOf(w); got != (replicaCount{1, 3}) {
			return fmt.Errorf("alone, leaderless: %+v", got)
		}
		info, err := f.Jsz(&server.JSzOptions{Accounts: true, Streams: true})
		if err != nil {
			return err
		}
		for _, a := range info.AccountDetails {
			for _, s := range a.Streams {
				if s.Name == "BRIDGED" && s.Cluster != nil && s.Cluster.Leader != "" {
					return fmt.Errorf("still led by %s", s.Cluster.Leader)
				}
			}
		}
		return nil
	})
}

// reachOf is w's count of BRIDGED.
func reachOf(w *peerWatch) replicaCount {
	counts, _, _ := w.replicaReach()
	return counts["BRIDGED"]
}

// A node that hosts no replica counts those a leaderless replica named.
func TestCountNamed(t *testing.T) {
	names := []string{"n1", "n2", "n3"}
	for _, tc := range []struct {
		self  string
		hears []string
		want  replicaCount
	}{{"n4", []string{"n3", "n5"}, replicaCount{1, 3}}, {"n4", []string{"n2", "n3", "n5"}, replicaCount{2, 3}}, {"n3", nil, replicaCount{1, 3}}} {
		if got := countNamed(tc.self, names, tc.hears); got != tc.want {
			t.Errorf("%s hearing %v: %+v, want %+v", tc.self, tc.hears, got, tc.want)
		}
	}
}

// One reading serves every reader within a beat; an older one is read
// again.
func TestStreamViewReadsOnceABeat(t *testing.T) {
	srvs, _ := startMetaCluster(t)
	v := newStreamView(srvs[0])
	v.every = time.Hour // no reading ages during the test, however loaded the machine
	a, err := v.streams()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := v.streams(); b != a {
		t.Fatal("a second reader within the beat got a new reading")
	}
	v.every = 0
	if b, _ := v.streams(); b == a {
		t.Fatal("a reader after the beat got the old reading")
	}
}

// A node that hosts no replica judges a stream whose leader stopped
// answering from the members remembered from its last answer with a
// leader, each newer such answer replacing them; a list, stale or not,
// never judges a stream whose leader answers.
func TestRememberedMembers(t *testing.T) {
	const self = "n4"
	v := newStreamView(nil) // remember and membersOf only: no reading
	led := func(names ...string) members { return members{led: true, names: names} }
	silent := "no answer within 1s"
	for _, step := range []struct {
		name   string
		leader string  // the tenant's reason; empty: its leader answered
		answer members // what the stream info request named
		hears  []string
		want   replicaCount // zero: not counted
	}{
		{"healthy answer: remembered, not counted", "", led("n1", "n2", "n3"), nil, replicaCount{}},
		{"leader silent, two replicas unheard: 1 of 3 at once", silent, members{}, []string{"n3", "n5"}, replicaCount{1, 3}},
		{"leader silent, every replica heard: 3 of 3 (held)", silent, members{}, []string{"n1", "n2", "n3"}, replicaCount{3, 3}},
		{"a leaderless replica's list comes first", "no leader elected", members{names: []string{"n1", "n2", "n5"}}, []string{"n5"}, replicaCount{1, 3}},
		{"moved: the newer answer replaces the list", "", led("n5", "n1", "n4"), nil, replicaCount{}},
		{"leader silent after the move: this node and n5 of n5 n1 n4", silent, members{}, []string{"n5"}, replicaCount{2, 3}},
		{"a stale list never judges a stream whose leader answers", "", members{}, nil, replicaCount{}},
		{"a leader reaching a minority: judged from its own answer's list", "its leader reaches 1 of 3 replicas, fewer than a majority", led("n1", "n2", "n3"), []string{"n1", "n5"}, replicaCount{1, 3}},
		{"the same, every replica heard by this node: 3 of 3 (held)", "its leader reaches 1 of 3 replicas, fewer than a majority", led("n1", "n2", "n3"), []string{"n1", "n2", "n3"}, replicaCount{3, 3}},
	} {
		ts := []readiness.Tenant{{Name: "t1", Leader: step.leader}}
		answers := []members{step.answer}
		rememberAnswers(v, ts, answers)
		fillReplicas(ts, answers, replicaSight{self: self, hears: step.hears, known: v.membersOf})
		if got := (replicaCount{ts[0].Up, ts[0].Replicas}); got != step.want {
			t.Errorf("%s: %+v, want %+v", step.name, got, step.want)
		}
	}
	// A stream counted from this node's server needs no list.
	ts := []readiness.Tenant{{Name: "t1", Leader: silent}}
	fillReplicas(ts, []members{{}}, replicaSight{hosted: map[string]replicaCount{hub.StreamOf("t1"): {2, 3}}, self: self, known: v.membersOf})
	if ts[0].Up != 2 || ts[0].Replicas != 3 {
		t.Errorf("hosted: %d of %d, want the server's 2 of 3", ts[0].Up, ts[0].Replicas)
	}
	// A tenant no longer open: its members forgotten.
	rememberAnswers(v, nil, nil)
	if got := v.membersOf(hub.StreamOf("t1")); got != nil {
		t.Errorf("closed tenant's members kept: %v", got)
	}
}
