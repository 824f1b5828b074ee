package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/readiness"
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

// Before the first ready, a tenant whose stream was not asked yet (past
// probeBatch, not its turn) is not taken for one that answered with an
// empty stream: the node waits for its answer, and a replica behind at it
// is stale until it has applied it (the machine's start rule), however
// long ago the node's first look was.
func TestNotAskedTenantIsNoAnswerAtStart(t *testing.T) {
	p := &prober{m: readiness.New(readiness.Config{})}
	T := time.Unix(1_800_000_000, 0)
	stats := []hub.TenantStats{{Tenant: "a", Applied: 100}, {Tenant: "b", Applied: 0}}
	observe := func(d time.Duration, asked int, last uint64) readiness.Verdict {
		ts := p.lastAnswers(stats)
		ts[asked].Last, ts[asked].Leader = last, ""
		ts[asked].Asked = T.Add(d)
		p.remember(ts)
		v, _ := p.m.Observe(readiness.Observation{At: T.Add(d), Serving: true, Tenants: ts})
		return v
	}
	if v := observe(0, 0, 100); v.Ready { // a asked, caught up; b not asked
		t.Fatalf("b not asked: %+v, want not ready", v)
	}
	for d := probeEvery; d < 5*time.Second; d += probeEvery { // b's turn, from then on: 500 events behind
		if v := observe(d, 1, 500); v.Ready || !p.m.Tenant("b", T.Add(d)).Stale {
			t.Fatalf("%v: b behind at its first answer: %+v, stale %v, want not ready, stale", d, v, p.m.Tenant("b", T.Add(d)).Stale)
		}
	}
	stats[1].Applied = 500
	if v := observe(5*time.Second, 1, 500); !v.Ready {
		t.Fatalf("b caught up: %+v, want ready", v)
	}
	if got := p.lastAnswers([]hub.TenantStats{{Tenant: "c"}}); got[0].Leader != "" {
		t.Fatalf("a tenant opened once ready: %+v, want the zero answer (asked in turn)", got[0])
	}
}

// Past probeBatch tenants, a cut shorter than a round of turns (heard at
// one beat, between two observations) ends only once every stream was
// asked again after its start: the tenants asked in later turns are found
// behind by what the cut hid, and their lag counts from the cut's start,
// not from their turn (an answer kept from before the cut once cleared
// the start at the first observation after it).
func TestShortCutOutlastsTheTurns(t *testing.T) {
	p := &prober{m: readiness.New(readiness.Config{})}
	T := time.Unix(1_800_000_000, 0)
	n := 3 * probeBatch // a round: 3 observations
	stats := make([]hub.TenantStats, n)
	for i := range stats {
		stats[i] = hub.TenantStats{Tenant: fmt.Sprintf("t%03d", i), Applied: 10}
	}
	last := uint64(10)
	observe := func(at time.Time) readiness.Verdict {
		ts := p.lastAnswers(stats)
		for _, i := range p.batch(n) {
			ts[i].Last, ts[i].Leader, ts[i].Asked = last, "", at.Add(-100*time.Millisecond)
		}
		p.remember(ts)
		v, _ := p.m.Observe(readiness.Observation{At: at, Serving: true, Tenants: ts})
		return v
	}
	heard := func(at time.Time, heard int) {
		p.m.ObserveReach(at, readiness.Reach{Heard: heard, Of: 3, Within: 1250 * time.Millisecond})
	}
	at := func(d time.Duration) time.Time { return T.Add(d) }
	for d := time.Duration(0); d <= 2500*time.Millisecond; d += probeEvery { // two rounds, all caught up
		heard(at(d), 3)
		observe(at(d))
	}
	if v := p.m.Verdict(at(2500 * time.Millisecond)); !v.Ready {
		t.Fatalf("before the cut: %+v, want ready", v)
	}
	heard(at(2750*time.Millisecond), 1) // cut: from the last beat that heard a majority, 2.5 s
	heard(at(2900*time.Millisecond), 3) // healed before the next observation
	last = 20                           // the majority committed 10 events meanwhile; the replicas here apply none
	cutStart := at(2500 * time.Millisecond)
	for d := 3 * time.Second; d <= 6*time.Second; d += probeEvery {
		heard(at(d), 3)
		observe(at(d))
	}
	// Every replica has lacked sequence 20 since the cut's start, 3.5 s
	// ago, past the 3 s bound, whichever turn found it.
	now := at(6 * time.Second)
	for _, st := range stats {
		if !p.m.Tenant(st.Tenant, now).Stale {
			t.Fatalf("%s behind since the cut's start %v ago: not stale", st.Tenant, now.Sub(cutStart))
		}
	}
	for i := range stats { // caught up: ready again after RecoverAfter
		stats[i].Applied = last
	}
	for d := 6500 * time.Millisecond; d <= 8*time.Second; d += probeEvery {
		heard(at(d), 3)
		observe(at(d))
	}
	if v := p.m.Verdict(at(8 * time.Second)); !v.Ready {
		t.Fatalf("caught up: %+v, want ready", v)
	}
}
