package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/rankwire/rankwire/internal/await"
)

// A follower of a real three-replica stream counts itself and the
// replicas it hears, of three, whether the group has a leader (the server
// lists the others) or not (it lists this node too).
func TestReplicaReachCountsWhomThisNodeHears(t *testing.T) {
	srvs, c := startMetaCluster(t)
	_, leader := bridgedStream(t, srvs, c)
	var f *server.Server
	var others []string
	for _, s := range srvs {
		if s.Name() != leader && f == nil {
			f = s
		} else {
			others = append(others, s.Name())
		}
	}
	w := &peerWatch{node: f.Name(), srv: f}
	for _, tc := range []struct {
		hears []string
		want  replicaCount
	}{{nil, replicaCount{1, 3}}, {[]string{leader}, replicaCount{2, 3}}, {others, replicaCount{3, 3}}} {
		w.hears = tc.hears
		if got := reachOf(w); got != tc.want {
			t.Fatalf("hearing %v: %+v, want %+v", tc.hears, got, tc.want)
		}
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
