package readiness

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)

const step = 500 * time.Millisecond

// healthy is an observation at t0+i·step with nothing failing and one
// tenant caught up.
func healthy(i int) Observation {
	return Observation{At: t0.Add(time.Duration(i) * step), Serving: true,
		Tenants: []Tenant{{Name: "casino-a", Applied: 10, Last: 10}}}
}

// readyMachine returns a machine made ready by healthy observations 0..n-1
// and the index of the next.
func readyMachine(t *testing.T) (*Machine, int) {
	t.Helper()
	m := New(Config{})
	i := 0
	for ; !m.Verdict(healthy(i).At).Ready || i == 0; i++ {
		m.Observe(healthy(i))
		if i > 10 {
			t.Fatalf("not ready after %d healthy observations: %+v", i, m.Verdict(healthy(i).At))
		}
	}
	return m, i
}

func TestNotReadyBeforeObservations(t *testing.T) {
	m := New(Config{})
	if v := m.Verdict(t0); v.Ready || v.Reason == "" {
		t.Fatalf("verdict before any observation: %+v", v)
	}
	if s := m.Tenant("casino-a", t0); s.Writable || !s.Stale {
		t.Fatalf("tenant before any observation: %+v", s)
	}
}

func TestFirstHealthyObservationIsReady(t *testing.T) {
	m := New(Config{})
	o := healthy(0)
	o.Serving = false
	if v, _ := m.Observe(o); v.Ready || !strings.Contains(v.Reason, "not serving") {
		t.Fatalf("observation while not serving: %+v", v)
	}
	if v, changed := m.Observe(healthy(1)); !v.Ready || !changed || v.Reason != "" {
		t.Fatalf("first healthy observation of a node never ready: %+v changed %v", v, changed)
	}
}

func TestTurnsReadyAfterRecoverAfter(t *testing.T) {
	m, i := readyMachine(t)
	o := healthy(i)
	o.Store = "full"
	m.Observe(o)
	v, _ := m.Observe(healthy(i + 1))
	if v.Ready || !strings.Contains(v.Reason, "recovering") || !strings.Contains(v.Reason, "store: full") {
		t.Fatalf("first healthy observation after a failure: %+v, want recovering", v)
	}
	v, _ = m.Observe(healthy(i + 2))
	if v.Ready {
		t.Fatalf("ready after %v, RecoverAfter is %v", step, DefaultRecoverAfter)
	}
	v, changed := m.Observe(healthy(i + 3))
	if !v.Ready || !changed || v.Reason != "" {
		t.Fatalf("after %v healthy: %+v changed %v", 2*step, v, changed)
	}
}

// Each local reason turns a ready node not ready at the first observation
// that has it, and names itself.
func TestLocalReasonsCountAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Observation)
		want   string
	}{
		{"not serving", func(o *Observation) { o.Serving = false }, "not serving"},
		{"store", func(o *Observation) { o.Store = "not connected to NATS" }, "store: not connected to NATS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, i := readyMachine(t)
			o := healthy(i)
			tc.change(&o)
			v, changed := m.Observe(o)
			if v.Ready || !changed || !strings.Contains(v.Reason, tc.want) {
				t.Fatalf("got %+v changed %v, want not ready with %q", v, changed, tc.want)
			}
		})
	}
}

// A cluster-wide condition that lasts less than FailAfter (an election
// after a peer's death) keeps a ready node ready; one that lasts longer
// turns it not ready, naming it.
func TestClusterWideConditionsAreHeld(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Observation)
		want   string
	}{
		// The JetStream API counts on a node with no tenant open (see TestMetaDoesNotCountWithTenantsOpen).
		{"meta", func(o *Observation) { o.Meta, o.Tenants = "context deadline exceeded", nil }, "JetStream API: context deadline exceeded"},
		{"leader", func(o *Observation) { o.Tenants[0].Leader, o.Tenants[0].Last = "no leader", 0 }, "1 tenant streams without a reachable leader"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, i := readyMachine(t)
			// An election of 2.5 s: no flip.
			for j := 0; j < 6; j++ {
				o := healthy(i + j)
				tc.change(&o)
				if v, _ := m.Observe(o); !v.Ready {
					t.Fatalf("not ready %v into a cluster-wide fault, FailAfter %v: %+v", time.Duration(j)*step, DefaultFailAfter, v)
				}
			}
			m.Observe(healthy(i + 6))
			if f := m.Flips(); f != 1 {
				t.Fatalf("flips %d, want 1 (the first ready)", f)
			}
			// A fault that lasts: not ready once it has held FailAfter.
			i += 7
			var v Verdict
			for j := 0; j <= 6; j++ {
				o := healthy(i + j)
				tc.change(&o)
				v, _ = m.Observe(o)
				if !v.Ready && j < 6 {
					t.Fatalf("not ready after %v, before FailAfter", time.Duration(j)*step)
				}
			}
			if v.Ready || !strings.Contains(v.Reason, tc.want) {
				t.Fatalf("after FailAfter: %+v, want not ready with %q", v, tc.want)
			}
			if tc.name == "leader" {
				noTenantInReason(t, v)
				if s := m.Tenant("casino-a", healthy(i+6).At); s.Writable {
					t.Fatalf("tenant of a leaderless stream: %+v, want not writable", s)
				}
			}
		})
	}
}

// A node that is not ready turns ready only after RecoverAfter without a
// failure, pending ones included: a fault that comes and goes does not
// make it flap.
func TestRecoveryNeedsAQuietSpell(t *testing.T) {
	m, i := readyMachine(t)
	o := healthy(i)
	o.Store = "full"
	m.Observe(o)
	flips := m.Flips()
	for j := 1; j <= 10; j++ {
		o := healthy(i + j)
		if j%2 == 0 {
			o.Tenants[0].Leader, o.Tenants[0].Last = "timeout", 0 // pending: resets the quiet spell
		}
		v, _ := m.Observe(o)
		if v.Ready {
			t.Fatalf("ready at %d with a cluster-wide fault every other probe", j)
		}
		if j%2 == 0 && !strings.HasPrefix(v.Reason, "recovering: not yet, 1 tenant streams without a reachable leader yet (was: store: full)") {
			t.Fatalf("reason while a cluster-wide fault pends: %q, want it named, not a quiet spell", v.Reason)
		}
	}
	if m.Flips() != flips {
		t.Fatalf("flips %d, want %d", m.Flips(), flips)
	}
	m.Observe(healthy(i + 11))
	m.Observe(healthy(i + 12))
	if v, _ := m.Observe(healthy(i + 13)); !v.Ready {
		t.Fatalf("not ready after a quiet spell of %v: %+v", 2*step, v)
	}
}

// A replica that keeps up under load (its stream moves on every probe)
// stays fresh; one that stops applying turns stale past MaxLag, at once.
func TestLagBound(t *testing.T) {
	m, i := readyMachine(t)
	for j := 0; j < 20; j++ { // keeps up: applied reaches each probe's last by the next
		o := healthy(i + j)
		o.Tenants[0].Applied, o.Tenants[0].Last = uint64(100*j), uint64(100*j+50)
		if v, _ := m.Observe(o); !v.Ready {
			t.Fatalf("a replica that keeps up: %+v", v)
		}
	}
	i += 20
	var v Verdict
	for j := 0; j <= 7; j++ { // stuck at 1950 while the stream goes on
		o := healthy(i + j)
		o.Tenants[0].Applied, o.Tenants[0].Last = 1950, uint64(2000+100*j)
		v, _ = m.Observe(o)
		if stale := m.Tenant("casino-a", o.At).Stale; stale != (time.Duration(j)*step > DefaultMaxLag) {
			t.Fatalf("stale %v after %v stuck", stale, time.Duration(j)*step)
		}
	}
	if v.Ready || !strings.Contains(v.Reason, "1 tenants' replicas trail their streams past the bound 3s") {
		t.Fatalf("stuck for %v: %+v", 7*step, v)
	}
	noTenantInReason(t, v)
	// A tenant that closes is forgotten.
	o := healthy(i + 8)
	o.Tenants = nil
	m.Observe(o)
	if m.Tenant("casino-a", o.At).Stale {
		t.Fatal("a closed tenant still stale")
	}
}

// A pause (no observation for longer than MaxSilence) voids the verdict
// at once, in Verdict and in the next observation, which then has to hold
// RecoverAfter.
func TestPauseVoidsTheVerdict(t *testing.T) {
	m, i := readyMachine(t)
	last := healthy(i - 1).At
	resumed := last.Add(10 * time.Second)
	v := m.Verdict(resumed)
	if v.Ready || !strings.Contains(v.Reason, "no readiness observation for 10s") {
		t.Fatalf("verdict after a 10 s pause: %+v", v)
	}
	if s := m.Tenant("casino-a", resumed); !s.Stale || s.Writable {
		t.Fatalf("tenant after a pause: %+v", s)
	}
	o := healthy(i)
	o.At = resumed
	v, changed := m.Observe(o)
	if v.Ready || !changed || !strings.Contains(v.Reason, "resumed after 10s") {
		t.Fatalf("first observation after the pause: %+v changed %v", v, changed)
	}
	o.At = resumed.Add(step)
	if v, _ := m.Observe(o); v.Ready || !strings.Contains(v.Reason, "recovering") || !strings.Contains(v.Reason, "resumed after") {
		t.Fatalf("second observation after the pause: %+v", v)
	}
}

func TestConfigDefaults(t *testing.T) {
	c := New(Config{MaxLag: time.Second}).Config()
	if c.MaxLag != time.Second || c.FailAfter != DefaultFailAfter || c.RecoverAfter != DefaultRecoverAfter || c.MaxSilence != DefaultMaxSilence {
		t.Fatalf("config %+v", c)
	}
}

// noTenantInReason fails unless v's reason keeps the tenant's name to the
// detail: /readyz answers anyone.
func noTenantInReason(t *testing.T, v Verdict) {
	t.Helper()
	if strings.Contains(v.Reason, "casino-a") || !strings.Contains(v.Detail, "casino-a") {
		t.Fatalf("verdict %+v: want the tenant in the detail only", v)
	}
}

// A tenant's own trouble (its replica behind, its stream without a leader)
// makes the node not ready but tells only that tenant's connections: the
// other tenant stays writable and fresh. A fault of the whole node tells
// every tenant.
func TestTenantStatusIsTheTenants(t *testing.T) {
	m, i := readyMachine(t)
	for j := 0; j <= 7; j++ {
		o := healthy(i + j)
		o.Tenants = []Tenant{{Name: "casino-a", Applied: 10, Last: uint64(20 + j)}, {Name: "casino-b", Applied: 10, Last: 10}}
		m.Observe(o)
	}
	at := healthy(i + 7).At
	if v := m.Verdict(at); v.Ready {
		t.Fatalf("a tenant behind past the bound: %+v, want not ready", v)
	}
	if a, b := m.Tenant("casino-a", at), m.Tenant("casino-b", at); !a.Stale || !b.Writable || b.Stale {
		t.Fatalf("casino-a %+v (want stale), casino-b %+v (want writable and fresh)", a, b)
	}
	o := healthy(i + 8)
	o.Store = "not connected to NATS"
	o.Tenants = append(o.Tenants, Tenant{Name: "casino-b", Applied: 10, Last: 10})
	m.Observe(o)
	if b := m.Tenant("casino-b", o.At); b.Writable {
		t.Fatalf("casino-b with the node's store down: %+v, want not writable", b)
	}
}

// TestWaitingSaysWhy: a node never ready yet, whose only failing
// conditions are cluster-wide ones not yet held, names them rather than
// "no observation".
func TestWaitingSaysWhy(t *testing.T) {
	m := New(Config{})
	at := time.Unix(1000, 0)
	v, _ := m.Observe(Observation{At: at, Serving: true, Meta: "no meta leader",
		Tenants: []Tenant{{Name: "t1", Leader: "no leader elected"}, {Name: "t2", Leader: "no leader elected"}}})
	want := "waiting: 2 tenant streams without a reachable leader yet"
	if v.Ready || v.Reason != want {
		t.Fatalf("verdict %+v, want not ready with %q", v, want)
	}
	m = New(Config{}) // no tenant open: the JetStream API is what it waits for
	v, _ = m.Observe(Observation{At: at, Serving: true, Meta: "no meta leader"})
	if want := "waiting: JetStream API: no meta leader (for 0s)"; v.Ready || v.Reason != want {
		t.Fatalf("verdict %+v, want not ready with %q", v, want)
	}
}

// TestRebuildingNotReady: a node rebuilding a diverged tenant is not
// ready at once, and says so without naming the tenant.
func TestRebuildingNotReady(t *testing.T) {
	m := New(Config{})
	at := time.Unix(1000, 0)
	if v, _ := m.Observe(Observation{At: at, Serving: true}); !v.Ready {
		t.Fatalf("healthy: %+v", v)
	}
	v, _ := m.Observe(Observation{At: at.Add(500 * time.Millisecond), Serving: true, Rebuilding: 1})
	if v.Ready || !strings.Contains(v.Reason, "1 tenants rebuilding") {
		t.Fatalf("rebuilding: %+v, want not ready at once naming the rebuild", v)
	}
}

// TestResumedBehindIsStale: a node paused for longer than MaxLag whose
// replica is behind when it resumes is stale at once (its lag counts from
// its last look before the pause), and does not turn ready while behind.
func TestResumedBehindIsStale(t *testing.T) {
	m := New(Config{})
	at := time.Unix(1000, 0)
	tenant := func(applied, last uint64) []Tenant { return []Tenant{{Name: "t1", Applied: applied, Last: last}} }
	if v, _ := m.Observe(Observation{At: at, Serving: true, Tenants: tenant(10, 10)}); !v.Ready {
		t.Fatalf("fresh: %+v", v)
	}
	at = at.Add(6 * time.Second) // paused
	for i := range 6 {
		v, _ := m.Observe(Observation{At: at.Add(time.Duration(i) * 500 * time.Millisecond), Serving: true, Tenants: tenant(10, 900)})
		if v.Ready || !m.Tenant("t1", at.Add(time.Duration(i)*500*time.Millisecond)).Stale {
			t.Fatalf("observation %d after the pause, replica 890 events behind: %+v, want not ready and stale", i, v)
		}
	}
}

// reachAt feeds a beat's reach at t0+i·step plus d.
func reachAt(m *Machine, i int, d time.Duration, heard int) (Verdict, bool) {
	return m.ObserveReach(t0.Add(time.Duration(i)*step+d), Reach{Heard: heard, Of: 3, Within: 1250 * time.Millisecond})
}

// A node that hears fewer than a majority is not ready at the beat that
// says so, without waiting for an observation or the hold, and its tenants
// are told stale and not writable; a node that keeps a majority during an
// election keeps its hold.
func TestCutOffCountsAtOnce(t *testing.T) {
	m, i := readyMachine(t)
	reachAt(m, i, 0, 3)
	// An election: the stream's leader does not answer, 2 of 3 heard.
	for k := range 4 {
		o := healthy(i + k)
		o.Tenants[0].Last, o.Tenants[0].Leader = 0, "no answer within 1s"
		reachAt(m, i+k, 0, 2)
		if v, _ := m.Observe(o); !v.Ready {
			t.Fatalf("during an election with a majority heard, %v in: %+v", time.Duration(k)*step, v)
		}
	}
	i += 4
	v, changed := reachAt(m, i, 100*time.Millisecond, 1)
	if v.Ready || !changed || !strings.Contains(v.Reason, "cut off: hears from 1 of 3") {
		t.Fatalf("beat hearing 1 of 3: %+v changed %v, want not ready at once, cut off", v, changed)
	}
	if s := m.Tenant("casino-a", t0.Add(time.Duration(i)*step+200*time.Millisecond)); s.Writable || !s.Stale {
		t.Fatalf("tenant of a cut-off node: %+v, want stale and not writable", s)
	}
	if v, _ := m.Observe(healthy(i + 1)); v.Ready || !strings.Contains(v.Reason, "cut off") {
		t.Fatalf("observation while cut off: %+v", v)
	}
	if got := m.Flips(); got != 2 {
		t.Fatalf("flips %d, want 2 (ready, then cut off)", got)
	}
}

// After a cut, a replica seen behind counts its lag from the cut's start
// (the last beat that heard a majority), not from when it is seen: the
// node serves what it had at the cut, so it stays not ready until caught
// up; once caught up it no longer does.
func TestAfterACutCatchUpCountsFromTheCut(t *testing.T) {
	m, i := readyMachine(t)
	reachAt(m, i, 0, 3)        // the last majority heard: the cut's start
	for k := 1; k <= 10; k++ { // 5 s cut off, the leader unreachable
		reachAt(m, i+k, 0, 1)
		o := healthy(i + k)
		o.Tenants[0].Last, o.Tenants[0].Leader = 0, "no answer within 1s"
		m.Observe(o)
	}
	i += 11
	reachAt(m, i, 0, 3) // healed
	for k := range 4 {
		o := healthy(i + k)
		o.Tenants[0].Last = 500 // the majority went on; this replica catches up
		if v, _ := m.Observe(o); v.Ready || !strings.Contains(v.Reason, "trail their streams") {
			t.Fatalf("behind after a 5 s cut, %v after the heal: %+v, want stale", time.Duration(k)*step, v)
		}
		if s := m.Tenant("casino-a", o.At); !s.Stale {
			t.Fatalf("tenant behind after a cut: %+v, want stale", s)
		}
	}
	i += 4
	var v Verdict
	for k := range 3 { // caught up: recovers after RecoverAfter
		o := healthy(i + k)
		o.Tenants[0].Applied, o.Tenants[0].Last = 500, 500
		v, _ = m.Observe(o)
	}
	if !v.Ready {
		t.Fatalf("caught up for %v after the cut: %+v", 2*step, v)
	}
	// A later catch-up counts from when it is seen again.
	i += 3
	o := healthy(i)
	o.Tenants[0].Applied, o.Tenants[0].Last = 500, 520
	if v, _ := m.Observe(o); !v.Ready {
		t.Fatalf("a replica one probe behind, long after the cut: %+v", v)
	}
}

// A node that never heard a majority is starting: it is not ready (it can
// write nothing) but its catch-up counts as before, from when seen (its
// first look found its replica caught up).
func TestStartingNodeIsNotCountedFromACut(t *testing.T) {
	m := New(Config{})
	v, _ := m.ObserveReach(t0, Reach{Heard: 1, Of: 3})
	if v.Ready {
		t.Fatalf("never observed: %+v", v)
	}
	o := healthy(0)
	if v, _ := m.Observe(o); v.Ready || !strings.Contains(v.Reason, "cut off: hears from 1 of 3") {
		t.Fatalf("starting alone: %+v, want cut off", v)
	}
	m.ObserveReach(t0.Add(step), Reach{Heard: 2, Of: 3})
	o = healthy(1) // one probe behind
	o.Tenants[0].Last = 11
	if v, _ := m.Observe(o); !v.Ready {
		t.Fatalf("joined a majority, never ready before: %+v, want ready at once", v)
	}
}

// A node starting with a copy far behind (it was down for a while) is not
// ready while it catches up, however long the catch-up's first look was
// ago being under MaxLag: its copy is as old as its downtime, not as its
// first look; once it holds what the stream held then, its lag counts
// from the marks seen since, and it is ready as soon as that is within
// MaxLag.
func TestStartBehindIsStaleUntilCaughtUp(t *testing.T) {
	m := New(Config{})
	var last, applied uint64 = 5000, 1000 // 20 s of writes at 200/s behind
	for i := range 12 {
		last += 100    // 200/s
		applied += 400 // 800/s: caught up with 5000 at probe 10
		if i == 11 {
			applied = last - 3
		}
		o := Observation{At: t0.Add(time.Duration(i) * step), Serving: true,
			Tenants: []Tenant{{Name: "t1", Applied: min(applied, last), Last: last}}}
		v, _ := m.Observe(o)
		switch {
		case applied < 5100 && (v.Ready || !m.Tenant("t1", o.At).Stale):
			t.Fatalf("probe %d, applied %d of the %d seen first: %+v, want stale", i, applied, 5100, v)
		case applied >= 5100 && !v.Ready:
			t.Fatalf("probe %d, applied %d, past the first look's 5100 and within a probe of the rest: %+v, want ready", i, applied, v)
		}
	}
}

// Without a cluster (the zero Reach) nothing is cut off.
func TestZeroReachIsNotCutOff(t *testing.T) {
	m, i := readyMachine(t)
	if v, changed := m.ObserveReach(healthy(i).At, Reach{}); !v.Ready || changed {
		t.Fatalf("zero reach: %+v changed %v", v, changed)
	}
}

// A node in a non-transitive partition (it misses a peer another hears)
// whose stream's leader does not answer it is stale at once, without the
// hold: the others hear each other, so it is no election's. Where its
// leader answers it stays ready; after it, catch-up counts from before it.
func TestPartialViewWithSilentLeaderCountsAtOnce(t *testing.T) {
	m, i := readyMachine(t)
	m.ObserveReach(healthy(i).At, Reach{Heard: 3, Of: 3})
	partial := Reach{Heard: 2, Of: 3, Within: time.Second, Partial: true}
	m.ObserveReach(healthy(i+1).At, partial)
	if v, _ := m.Observe(healthy(i + 1)); !v.Ready {
		t.Fatalf("partial view, leader answering: %+v, want ready", v)
	}
	o := healthy(i + 2)
	o.Tenants[0].Last, o.Tenants[0].Leader = 0, "no answer within 1s"
	m.ObserveReach(o.At, partial)
	v, changed := m.Observe(o)
	if v.Ready || !changed || !strings.Contains(v.Reason, "cut from part of the cluster") || strings.Contains(v.Reason, "casino-a") {
		t.Fatalf("partial view, leader silent: %+v changed %v, want not ready at once, no tenant named", v, changed)
	}
	if !strings.Contains(v.Detail, "casino-a") {
		t.Fatalf("detail %q does not name the tenant", v.Detail)
	}
	if s := m.Tenant("casino-a", o.At); !s.Stale {
		t.Fatalf("tenant whose leader is silent in a partial view: %+v, want stale", s)
	}
	for k := 3; k < 10; k++ { // 3.5 s more of it
		o := healthy(i + k)
		o.Tenants[0].Last, o.Tenants[0].Leader = 0, "no answer within 1s"
		m.ObserveReach(o.At, partial)
		m.Observe(o)
	}
	m.ObserveReach(healthy(i+10).At, Reach{Heard: 3, Of: 3})
	o = healthy(i + 10)
	o.Tenants[0].Last = 400
	if v, _ := m.Observe(o); v.Ready || !strings.Contains(v.Reason, "trail their streams") {
		t.Fatalf("healed, replica behind since the partial view began: %+v, want stale", v)
	}
}

// The sequence a healthy follower sees when the stream's leader is killed
// under load (the fault suite's kill9-leader on a loaded machine): at
// every probe its replica is a few sequences behind the leader's last (it
// keeps up, a probe late), so a catch-up is pending when the leader dies;
// the probes during the election wait out their 1 s timeout, so the
// hold's clock starts 1–1.5 s after the lag's; the node hears a majority
// throughout; the new leader answers 3.5 s after the last probe before
// the death, and the replica applies what it missed a moment later. The
// election is shorter than the hold and the replica never fell behind
// the cluster's progress by more than the election: the node stays ready
// and its tenant fresh. Before the catch-up's clock stopped during an
// election it counted the election against --max-lag, and this node
// turned 503 at once ("replicas trail their streams past the bound 3s").
func TestElectionDoesNotCountAgainstTheLag(t *testing.T) {
	m, i := readyMachine(t)
	T := healthy(i).At
	obs := func(d time.Duration, applied, last uint64, leader string) Observation {
		return Observation{At: T.Add(d), Serving: true,
			Tenants: []Tenant{{Name: "casino-a", Applied: applied, Last: last, Leader: leader}}}
	}
	beat := func(d time.Duration, heard int) {
		m.ObserveReach(T.Add(d), Reach{Heard: heard, Of: 3, Within: 1250 * time.Millisecond})
	}
	beat(0, 3)
	for _, o := range []Observation{
		obs(-time.Second, 980, 990, ""), // keeping up, a probe late
		obs(-step, 990, 1000, ""),
		obs(0, 1000, 1020, ""), // the last probe before the leader dies (at +0.4 s)
	} {
		m.Observe(o)
	}
	flips := m.Flips()
	for _, b := range []struct {
		d     time.Duration
		heard int
	}{{250 * time.Millisecond, 3}, {time.Second, 3}, {1750 * time.Millisecond, 2}, {2500 * time.Millisecond, 2}, {3250 * time.Millisecond, 2}} {
		beat(b.d, b.heard) // the dead leader's beats stop; 2 of 3 heard: an election, not a cut
	}
	for _, o := range []Observation{
		obs(1500*time.Millisecond, 1015, 0, "no answer within 1s"), // the probe sent at +0.5 s timed out
		obs(3000*time.Millisecond, 1015, 0, "no answer within 1s"), // and the one sent at +2 s
		obs(3500*time.Millisecond, 1018, 1040, ""),                 // the new leader answers; the replica still receives what it missed
		obs(4000*time.Millisecond, 1040, 1060, ""),                 // caught up with the old catch-up, a probe late as usual
		obs(4500*time.Millisecond, 1060, 1080, ""),
	} {
		v, _ := m.Observe(o)
		if !v.Ready {
			t.Fatalf("healthy node %v after the last probe before the leader's death: %+v, want ready", o.At.Sub(T), v)
		}
		if s := m.Tenant("casino-a", o.At); s.Stale {
			t.Fatalf("tenant %v after the last probe before the death: %+v, want fresh", o.At.Sub(T), s)
		}
	}
	if m.Flips() != flips {
		t.Fatalf("flips %d, want %d: the verdict changed", m.Flips(), flips)
	}
}

// The election's credit is bounded: a replica that applies nothing while
// its stream's leader answers only every third probe (a flaky leader, so
// the hold never trips) still turns stale once it has trailed for MaxLag
// plus at most FailAfter of credited leaderless time.
func TestElectionCreditIsBounded(t *testing.T) {
	m, i := readyMachine(t)
	var v Verdict
	k := 0
	for ; k < 40; k++ {
		o := healthy(i + k)
		o.Tenants[0].Applied, o.Tenants[0].Last = 5, uint64(100+k)
		if k%3 != 0 {
			o.Tenants[0].Last, o.Tenants[0].Leader = 0, "no answer within 1s"
		}
		if v, _ = m.Observe(o); !v.Ready {
			break
		}
	}
	stuck := time.Duration(k) * step
	if v.Ready || !strings.Contains(v.Reason, "trail their streams") {
		t.Fatalf("a replica stuck for %v behind a flaky leader: %+v, want stale", stuck, v)
	}
	if limit := DefaultMaxLag + DefaultFailAfter + step; stuck > limit {
		t.Fatalf("stale only after %v stuck, want at most MaxLag+FailAfter (+ a probe) = %v", stuck, limit)
	}
	if stuck <= DefaultMaxLag {
		t.Fatalf("stale after %v: the leaderless probes were not credited", stuck)
	}
}

// The same catch-up on a node that was cut off meanwhile gets no credit:
// its stream's leader was silent to it alone, so its lag counts in full
// and it says stale (not ready) when the leader answers it again with the
// replica behind since before the cut.
func TestCutNodeGetsNoElectionCredit(t *testing.T) {
	m, i := readyMachine(t)
	T := healthy(i).At
	at := func(d time.Duration) time.Time { return T.Add(d) }
	m.ObserveReach(at(0), Reach{Heard: 3, Of: 3})
	m.Observe(Observation{At: at(0), Serving: true, Tenants: []Tenant{{Name: "casino-a", Applied: 1000, Last: 1020}}})
	for _, d := range []time.Duration{1500 * time.Millisecond, 3000 * time.Millisecond} {
		m.ObserveReach(at(d), Reach{Heard: 1, Of: 3})
		m.Observe(Observation{At: at(d), Serving: true, Tenants: []Tenant{{Name: "casino-a", Applied: 1015, Leader: "no answer within 1s"}}})
	}
	m.ObserveReach(at(3250*time.Millisecond), Reach{Heard: 3, Of: 3}) // healed
	o := Observation{At: at(3500 * time.Millisecond), Serving: true, Tenants: []Tenant{{Name: "casino-a", Applied: 1018, Last: 1040}}}
	if v, _ := m.Observe(o); v.Ready || !strings.Contains(v.Reason, "trail their streams") {
		t.Fatalf("healed, replica behind since before the cut: %+v, want stale", v)
	}
	if s := m.Tenant("casino-a", o.At); !s.Stale {
		t.Fatalf("tenant: %+v, want stale", s)
	}
}

// The sequence a healthy node saw in the fault suite's partition-follower
// (load average 18–65) when the cut follower led the JetStream meta group:
// the meta group took longer than the hold to elect (every probe of the
// JetStream API waited out its 1 s: "no answer within 1s" for 3 s and
// more), while the tenant's stream, led by a healthy node, answered at
// every probe and the replica kept up. The node acknowledged every write
// meanwhile: it stays ready. Before the API counted only on a node with no
// tenant open, it turned 503 at 3.003 s ("JetStream API: no answer within
// 1s (for 3.003s)") and stayed so 4 s, "recovering" included.
func TestMetaDoesNotCountWithTenantsOpen(t *testing.T) {
	m, i := readyMachine(t)
	T := healthy(i).At
	m.ObserveReach(T, Reach{Heard: 3, Of: 3})
	flips := m.Flips()
	for k := 1; k <= 6; k++ { // 1.5 s apart: each waits out its 1 s timeout
		at := T.Add(time.Duration(k) * 1500 * time.Millisecond)
		m.ObserveReach(at, Reach{Heard: 2, Of: 3}) // the cut follower's beats stopped: a majority heard
		o := Observation{At: at, Serving: true, Meta: "no answer within 1s",
			Tenants: []Tenant{{Name: "casino-a", Applied: uint64(100 * k), Last: uint64(100*k + 20)}}}
		if v, _ := m.Observe(o); !v.Ready {
			t.Fatalf("%v without the JetStream API, the tenant's leader answering: %+v, want ready", o.At.Sub(T), v)
		}
		if s := m.Tenant("casino-a", at); !s.Writable || s.Stale {
			t.Fatalf("tenant %v in: %+v, want writable and fresh", o.At.Sub(T), s)
		}
	}
	if m.Flips() != flips {
		t.Fatalf("flips %d, want %d", m.Flips(), flips)
	}
}

// TestStartingGatesOnlyTheFirstReady: a node whose NATS server is still
// busy with its start-up work is not ready, naming it; once that is done
// it turns ready at once, and later start-up reasons (none expected, but
// a prober may keep asking) do not turn it not ready.
func TestStartingGatesOnlyTheFirstReady(t *testing.T) {
	m := New(Config{})
	o := healthy(0)
	o.Starting = "JetStream stream 'RW_a' is not current"
	v, _ := m.Observe(o)
	if v.Ready || !strings.Contains(v.Reason, "starting:") || !strings.Contains(v.Detail, "RW_a") || strings.Contains(v.Reason, "RW_a") {
		t.Fatalf("starting: %+v, want not ready, the start-up work in the detail only (it names a tenant)", v)
	}
	if v, changed := m.Observe(healthy(1)); !v.Ready || !changed {
		t.Fatalf("start-up work done: %+v changed %v, want ready at once", v, changed)
	}
	o = healthy(2)
	o.Starting = "JetStream stream 'RW_a' is not current"
	if v, _ := m.Observe(o); !v.Ready {
		t.Fatalf("a start-up reason after the first ready: %+v, want still ready", v)
	}
}

// TestOnlyStartingIsTheGateAlone: Verdict.OnlyStarting holds where the
// start-up work is the only thing keeping the node not ready, and not
// where another condition fails too, or one pends.
func TestOnlyStartingIsTheGateAlone(t *testing.T) {
	const work = "JetStream stream 'RW_a' is not current"
	cases := []struct {
		name string
		edit func(*Observation)
		want bool
	}{
		{"alone", func(o *Observation) {}, true},
		{"store down too", func(o *Observation) { o.Store = "nats: disconnected" }, false},
		{"not serving too", func(o *Observation) { o.Serving = false }, false},
		{"rebuilding too", func(o *Observation) { o.Rebuilding = 1 }, false},
		{"a leader pending too", func(o *Observation) { o.Tenants = []Tenant{{Name: "casino-a", Leader: "no leader elected"}} }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := New(Config{})
			o := healthy(0)
			o.Starting = work
			c.edit(&o)
			v, _ := m.Observe(o)
			if v.Ready || v.OnlyStarting != c.want {
				t.Fatalf("%+v, want not ready, OnlyStarting %v", v, c.want)
			}
			if got := m.Verdict(o.At).OnlyStarting; got != c.want {
				t.Fatalf("Verdict's OnlyStarting %v, want %v", got, c.want)
			}
		})
	}
	m := New(Config{})
	if v, _ := m.Observe(healthy(0)); v.OnlyStarting {
		t.Fatalf("ready: %+v, want OnlyStarting false", v)
	}
}

// leaderless is observation i with casino-a's stream without a reachable
// leader and up of 3 replicas reachable from this node.
func leaderless(i, up int) Observation {
	o := healthy(i)
	o.Tenants[0].Last, o.Tenants[0].Leader = 0, "no leader elected"
	o.Tenants[0].Up, o.Tenants[0].Replicas = up, 3
	return o
}

// A stream whose replicas this node cannot reach a majority of can elect
// no leader: holding is pointless, the node is not ready at once, and
// ready again once the stream has a leader and RecoverAfter passed.
func TestNoQuorumCountsAtOnce(t *testing.T) {
	m, i := readyMachine(t)
	v, changed := m.Observe(leaderless(i, 1))
	if v.Ready || !changed || !strings.Contains(v.Reason, "no majority of a stream's replicas reachable: 1 of 3") {
		t.Fatalf("no quorum: %+v changed %v", v, changed)
	}
	if strings.Contains(v.Reason, "casino-a") || !strings.Contains(v.Detail, "casino-a") {
		t.Fatalf("reason names the tenant or detail does not: %+v", v)
	}
	if s := m.Tenant("casino-a", leaderless(i, 1).At); s.Writable {
		t.Fatalf("tenant without quorum writable: %+v", s)
	}
	for k := 1; k <= 3; k++ {
		if v, _ = m.Observe(healthy(i + k)); v.Ready != (k == 3) {
			t.Fatalf("%d healthy observations after: %+v", k, v)
		}
	}
}

// An ordinary election (a majority of the replicas reachable) and a
// leaderless stream of unknown replicas are still held for FailAfter:
// a healthy node does not flip for an election shorter than the hold.
func TestLeaderlessWithQuorumIsHeld(t *testing.T) {
	for _, up := range []int{2, 3, 0} {
		m, i := readyMachine(t)
		n := int(DefaultFailAfter / step)
		for k := range n {
			o := leaderless(i+k, up)
			if up == 0 {
				o.Tenants[0].Replicas = 0
			}
			if v, _ := m.Observe(o); !v.Ready {
				t.Fatalf("up %d: not ready %v into the election: %+v", up, time.Duration(k)*step, v)
			}
		}
		if m.Flips() != 1 {
			t.Fatalf("up %d: flips %d", up, m.Flips())
		}
		if v, _ := m.Observe(leaderless(i+n+1, up)); v.Ready && up != 0 {
			t.Fatalf("up %d: ready past FailAfter: %+v", up, v)
		}
	}
}

// catchUpSim is a tenant's stream that commits rate events a second from
// t0 and a replica of it that is paused (applies nothing, and its machine
// observes nothing) from pauseAt for pause, then catches up at catchUp
// events a second, and keeps up to within lagSeqs events once caught up
// (under load a replica read before the leader is asked is a few events
// behind). Its truth: a read is as old as the time since the first event
// it lacks was committed.
type catchUpSim struct {
	rate, catchUp   float64
	pauseAt, pause  time.Duration
	lagSeqs         uint64
	appliedAtResume uint64
}

func (s catchUpSim) last(d time.Duration) uint64 { return uint64(s.rate * d.Seconds()) }

func (s catchUpSim) applied(d time.Duration) uint64 {
	keep := s.last(d) - min(s.last(d), s.lagSeqs)
	if d < s.pauseAt {
		return keep
	}
	if d < s.pauseAt+s.pause {
		return s.last(s.pauseAt) - min(s.last(s.pauseAt), s.lagSeqs)
	}
	return min(keep, s.last(s.pauseAt)-min(s.last(s.pauseAt), s.lagSeqs)+uint64(s.catchUp*(d-s.pauseAt-s.pause).Seconds()))
}

// staleness is the truth's age of a read at d: since the first event the
// replica lacks was committed.
func (s catchUpSim) staleness(d time.Duration) time.Duration {
	a := s.applied(d)
	if a >= s.last(d) {
		return 0
	}
	committed := time.Duration(float64(a+1) / s.rate * float64(time.Second))
	return d - committed
}

// run observes every step outside the pause (and feeds reach like the
// gateway's beats: cut off at the first beat after the pause, then a
// majority again) and returns, per observation after the pause, the
// offset from the resume, the verdict, and the truth's staleness.
func (s catchUpSim) run(t *testing.T, cutAtResume bool, until time.Duration) (offs []time.Duration, ready []bool, stale []time.Duration) {
	t.Helper()
	m := New(Config{})
	resume := s.pauseAt + s.pause
	observe := func(d time.Duration) Verdict {
		v, _ := m.Observe(Observation{At: t0.Add(d), Serving: true,
			Tenants: []Tenant{{Name: "t1", Applied: s.applied(d), Last: s.last(d)}}})
		return v
	}
	for d := time.Duration(0); d < s.pauseAt; d += step {
		m.ObserveReach(t0.Add(d), Reach{Heard: 3, Of: 3})
		observe(d)
	}
	if !m.Verdict(t0.Add(s.pauseAt - step)).Ready {
		t.Fatalf("not ready before the pause: %+v", m.Verdict(t0.Add(s.pauseAt-step)))
	}
	if cutAtResume { // the first beat after the pause: the peers' beats are still queued
		m.ObserveReach(t0.Add(resume), Reach{Heard: 1, Of: 3})
	}
	m.ObserveReach(t0.Add(resume+200*time.Millisecond), Reach{Heard: 3, Of: 3})
	for d := resume + 300*time.Millisecond; d < resume+until; d += step {
		v := observe(d)
		offs, ready, stale = append(offs, d-resume), append(ready, v.Ready), append(stale, s.staleness(d))
	}
	return offs, ready, stale
}

// A node paused for longer than MaxLag whose peers wrote on meanwhile is
// judged, once it has applied what the stream held when it woke, on the
// time it has been awake: it turns ready within RecoverAfter and two
// probes of its reads being within MaxLag (the truth's), whether or not
// its first beat after the pause found it cut off (whose catch-up used to
// count from the pause's start until one probe happened to find the
// replica exactly caught up, which under load may take seconds); and it
// never says ready while its reads are older than MaxLag and a probe.
func TestResumedJudgedOnAwakeTime(t *testing.T) {
	for _, cut := range []bool{false, true} {
		for _, catchUp := range []float64{600, 1200, 4000} {
			s := catchUpSim{rate: 200, catchUp: catchUp, pauseAt: 3 * time.Second, pause: 5 * time.Second, lagSeqs: 3}
			offs, ready, stale := s.run(t, cut, 10*time.Second)
			var fresh, readyAt time.Duration = -1, -1
			for i, off := range offs {
				if ready[i] && stale[i] > DefaultMaxLag+step {
					t.Fatalf("cut %v, catch-up %v/s: ready %v after the resume with reads %v old", cut, catchUp, off, stale[i])
				}
				if fresh < 0 && stale[i] <= DefaultMaxLag {
					fresh = off
				}
				if readyAt < 0 && ready[i] {
					readyAt = off
				}
			}
			if readyAt < 0 || readyAt-fresh > DefaultRecoverAfter+2*step {
				t.Fatalf("cut %v, catch-up %v/s: reads fresh %v after the resume, ready %v after it; want within %v",
					cut, catchUp, fresh, readyAt, DefaultRecoverAfter+2*step)
			}
		}
	}
}

// A replica that catches up more slowly than its stream grows stays stale
// past its first target: once it has applied the sequence seen when it
// was first behind, what it lacks is still as old as the next mark, not
// the observation that happens to follow (which used to start a fresh
// catch-up and turn it ready after RecoverAfter with reads seconds old).
func TestSlowCatchUpStaysStale(t *testing.T) {
	m := New(Config{})
	var last, applied uint64 = 100, 100
	for i := range 4 { // ready, caught up
		m.Observe(Observation{At: t0.Add(time.Duration(i) * step), Serving: true,
			Tenants: []Tenant{{Name: "t1", Applied: applied, Last: last}}})
	}
	for i := 4; i < 40; i++ { // the stream gains 100 a probe, the replica 60
		last += 100
		applied += 60
		at := t0.Add(time.Duration(i) * step)
		v, _ := m.Observe(Observation{At: at, Serving: true,
			Tenants: []Tenant{{Name: "t1", Applied: applied, Last: last}}})
		// The first event it lacks came in probe (applied-100)/100 + 4.
		lacking := time.Duration(i-(int(applied-100)/100+4)) * step
		if v.Ready && lacking > DefaultMaxLag+step {
			t.Fatalf("probe %d: ready with reads about %v old (applied %d of %d)", i, lacking, applied, last)
		}
		if lacking > DefaultMaxLag+2*step && !m.Tenant("t1", at).Stale {
			t.Fatalf("probe %d: tenant not stale with reads about %v old", i, lacking)
		}
	}
}

// A node paused for longer than MaxSilence whose stream's leader does not
// answer at the first look after the resume (it led the stream and lost it
// during the pause: an election) is still judged from before the pause at
// the look where the leader answers again: its replica lacks the pause's
// events, older than MaxLag.
func TestResumedLeaderSilentAtFirstLookCountsFromThePause(t *testing.T) {
	m := New(Config{})
	for i := range 4 {
		m.Observe(Observation{At: t0.Add(time.Duration(i) * step), Serving: true,
			Tenants: []Tenant{{Name: "t1", Applied: 100, Last: 100}}})
	}
	resume := t0.Add(3*step + 10*time.Second)
	m.Observe(Observation{At: resume, Serving: true,
		Tenants: []Tenant{{Name: "t1", Applied: 100, Leader: "no leader elected"}}})
	for i := 1; i <= 6; i++ { // the leader answers: 10 s of writes the replica lacks, caught up slowly
		at := resume.Add(time.Duration(i) * step)
		v, _ := m.Observe(Observation{At: at, Serving: true,
			Tenants: []Tenant{{Name: "t1", Applied: 100 + uint64(i), Last: 2100}}})
		if v.Ready || !m.Tenant("t1", at).Stale {
			t.Fatalf("%v after the resume, applied %d of 2100 (lacking events 10 s old): ready %v, stale %v",
				at.Sub(resume), 100+i, v.Ready, m.Tenant("t1", at).Stale)
		}
	}
}

// A replica trailing its stream steadily by more than maxMarks
// observations, within a MaxLag that long, is judged on about its lag:
// never younger than it is (the marks only merge towards earlier), and
// not past the bound it keeps (merging the newest marks instead counted
// everything past maxMarks from one time: 25 s judged 33.5 s, stale).
func TestLongSteadyLagWithinALongMaxLag(t *testing.T) {
	const lag = 25 * time.Second
	m := New(Config{MaxLag: 30 * time.Second})
	for i := range 400 {
		d := time.Duration(i) * step
		last, applied := uint64(100+100*d/time.Second), uint64(100)
		if d > lag {
			applied = uint64(100 + 100*(d-lag)/time.Second)
		}
		at := t0.Add(d)
		v, _ := m.Observe(Observation{At: at, Serving: true, Tenants: []Tenant{{Name: "t1", Applied: applied, Last: last}}})
		if d > 40*time.Second && (!v.Ready || m.Tenant("t1", at).Stale) {
			t.Fatalf("%v, %v behind: %+v, stale %v; want ready, fresh", d, lag, v, m.Tenant("t1", at).Stale)
		}
		b := m.lag["t1"]
		if len(b.marks) > maxMarks {
			t.Fatalf("%d marks, want at most %d", len(b.marks), maxMarks)
		}
		if d > lag+step && at.Sub(b.marks[0].at) < lag-step {
			t.Fatalf("%v: judged %v behind, truly %v", d, at.Sub(b.marks[0].at), lag)
		}
	}
}

// An answer asked before a cut's start (a prober asking in turns keeps
// one for the tenants not asked this time) does not end the start: the
// tenant found behind at its next answer counts from the cut's start.
func TestKeptAnswerDoesNotEndACut(t *testing.T) {
	m, i := readyMachine(t)
	reachAt(m, i, 0, 3)                    // the cut's start
	reachAt(m, i, 250*time.Millisecond, 1) // cut off, healed before the next observation
	reachAt(m, i, 400*time.Millisecond, 3)
	before := t0.Add(time.Duration(i-1) * step)
	observe := func(k int, bLast uint64, bAsked time.Time) Verdict {
		o := healthy(i + k)
		o.Tenants = append(o.Tenants, Tenant{Name: "casino-b", Applied: 10, Last: bLast, Asked: bAsked})
		v, _ := m.Observe(o)
		return v
	}
	observe(1, 10, before)                               // a asked now; b's answer kept from before the cut
	v := observe(2, 30, t0.Add(time.Duration(i+2)*step)) // b's turn: behind by what the cut hid
	for k := 3; k <= 8; k++ {
		v = observe(k, 30, t0.Add(time.Duration(i+2)*step))
	}
	// At i+8 b has lacked 30 since the cut's start (i): 4 s, past 3 s.
	if v.Ready || !m.Tenant("casino-b", t0.Add(time.Duration(i+8)*step)).Stale {
		t.Fatalf("b behind since the cut's start 4 s ago: %+v, want stale", v)
	}
}

// After a cut, a node does not turn ready while a tenant's answer is
// still one asked before the cut's start: what it serves for that tenant
// is unjudged since. Once asked again (caught up), it recovers.
func TestReadyWaitsForAnswersSinceTheCut(t *testing.T) {
	m, i := readyMachine(t)
	reachAt(m, i, 0, 3)
	reachAt(m, i, 250*time.Millisecond, 1)
	reachAt(m, i, 400*time.Millisecond, 3)
	before := t0.Add(time.Duration(i-1) * step)
	observe := func(k int, bAsked time.Time) Verdict {
		o := healthy(i + k)
		o.Tenants = append(o.Tenants, Tenant{Name: "casino-b", Applied: 10, Last: 10, Asked: bAsked})
		v, _ := m.Observe(o)
		return v
	}
	for k := 1; k <= 4; k++ { // 2 s, past RecoverAfter
		if v := observe(k, before); v.Ready || !strings.Contains(v.Reason, "1 tenant streams not asked since") {
			t.Fatalf("b not asked since the cut, %v after: %+v, want not ready, waiting for it", time.Duration(k)*step, v)
		}
	}
	var v Verdict
	for k := 5; k <= 8; k++ {
		v = observe(k, t0.Add(time.Duration(i+5)*step))
	}
	if !v.Ready {
		t.Fatalf("b asked since the cut, caught up: %+v, want ready", v)
	}
}

// An answer asked while the node was cut off (after the cut's start,
// before the beat that heard a majority again) does not end the start
// either: a leader on the node's side of the cut, not yet stepped down,
// answers its own last sequence, short of what the majority committed.
// The tenant found behind at its next turn counts from the cut's start.
func TestAnswerDuringTheCutDoesNotEndIt(t *testing.T) {
	m, i := readyMachine(t)
	reachAt(m, i, 0, 3)                    // the cut's start
	reachAt(m, i, 250*time.Millisecond, 1) // cut off
	reachAt(m, i, 400*time.Millisecond, 3) // healed
	during := t0.Add(time.Duration(i)*step + 300*time.Millisecond)
	observe := func(k int, bLast uint64, bAsked time.Time) Verdict {
		o := healthy(i + k)
		o.Tenants = append(o.Tenants, Tenant{Name: "casino-b", Applied: 10, Last: bLast, Asked: bAsked})
		v, _ := m.Observe(o)
		return v
	}
	if v := observe(1, 10, during); v.Ready || !strings.Contains(v.Reason, "1 tenant streams not asked since") {
		t.Fatalf("b asked only during the cut: %+v, want not ready, waiting for it", v)
	}
	var v Verdict
	for k := 2; k <= 8; k++ { // b's turn: behind by what the cut hid
		v = observe(k, 30, t0.Add(time.Duration(i+2)*step))
	}
	if v.Ready || !m.Tenant("casino-b", t0.Add(time.Duration(i+8)*step)).Stale {
		t.Fatalf("b behind since the cut's start 4 s ago: %+v, want stale", v)
	}
}
