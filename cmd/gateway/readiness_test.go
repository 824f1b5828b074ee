package main

import (
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Up to probeBatch tenants every one is asked at every observation; past
// it they take turns, every tenant asked within ceil(n/probeBatch)
// observations.
func TestProbeBatch(t *testing.T) {
	p := &prober{}
	if got := p.batch(3); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("3 tenants: %v", got)
	}
	n := 2*probeBatch + 10
	asked := map[int]int{}
	for range 3 {
		b := p.batch(n)
		if len(b) != probeBatch {
			t.Fatalf("a batch of %d, want %d", len(b), probeBatch)
		}
		for _, i := range b {
			asked[i]++
		}
	}
	if len(asked) != n {
		t.Fatalf("%d of %d tenants asked in 3 observations", len(asked), n)
	}
}

// A stream's leader that has heard from a majority of its replicas
// (itself included) within replicaSilence can commit; one that has not,
// cannot.
func TestReachableReplicas(t *testing.T) {
	peer := func(active time.Duration, offline bool) *jetstream.PeerInfo {
		return &jetstream.PeerInfo{Active: active, Offline: offline}
	}
	for _, tc := range []struct {
		name     string
		c        *jetstream.ClusterInfo
		up, of   int
		majority bool
	}{
		{"no cluster", nil, 1, 1, true},
		{"all heard", &jetstream.ClusterInfo{Replicas: []*jetstream.PeerInfo{peer(100*time.Millisecond, false), peer(0, false)}}, 3, 3, true},
		{"one silent", &jetstream.ClusterInfo{Replicas: []*jetstream.PeerInfo{peer(time.Minute, false), peer(0, false)}}, 2, 3, true},
		{"both silent", &jetstream.ClusterInfo{Replicas: []*jetstream.PeerInfo{peer(time.Minute, false), peer(2*time.Second, false)}}, 1, 3, false},
		{"one offline, one silent", &jetstream.ClusterInfo{Replicas: []*jetstream.PeerInfo{peer(0, true), peer(time.Minute, false)}}, 1, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up, of := reachable(tc.c)
			if up != tc.up || of != tc.of || (up > of/2) != tc.majority {
				t.Fatalf("reachable %d of %d, want %d of %d (majority %v)", up, of, tc.up, tc.of, tc.majority)
			}
		})
	}
}
