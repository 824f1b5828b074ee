package natsconf

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The embedded cluster's Raft timings are in place: the go:linkname
// targets exist (else the build fails) and init set them.
func TestRaftTimingsApplied(t *testing.T) {
	if natsHBInterval != raftHeartbeat || natsMinElectionTimeout != raftElectionMin || natsMaxElectionTimeout != raftElectionMax {
		t.Fatalf("raft timings hb %v election %v..%v, want %v and %v..%v", natsHBInterval,
			natsMinElectionTimeout, natsMaxElectionTimeout, raftHeartbeat, raftElectionMin, raftElectionMax)
	}
	if 4*raftHeartbeat > raftElectionMin {
		t.Fatalf("heartbeat %v too slow for a %v election timeout: a follower would campaign against a live leader", raftHeartbeat, raftElectionMin)
	}
}

// A split vote (both survivors candidates of one term) costs a second
// timeout: two of the longest must fit the fault suite's 3 s bound on a
// write gap (docs/CLUSTERING.md, "The departed peer's long election").
// With the former 2 s, two rounds took up to 4 s.
func TestTwoElectionRoundsFitTheWriteGapBound(t *testing.T) {
	const bound = 3 * time.Second
	if 2*raftElectionMax > bound {
		t.Fatalf("two election rounds take up to %v, past the %v bound", 2*raftElectionMax, bound)
	}
	if raftElectionMax <= raftElectionMin {
		t.Fatalf("election window %v..%v: the survivors' timers need a spread to avoid split votes", raftElectionMin, raftElectionMax)
	}
}

// splitVoteTail simulates n leader deaths with two surviving replicas:
// each round both timers run out at random in [lo, hi); the earlier wins
// unless the other ran out within lat of it (a split vote: both are
// candidates of one term), and then both wait a fresh round. It returns
// the fractions of elections longer than 2.75 s and than 3 s.
func splitVoteTail(r *rand.Rand, n int, lo, hi, lat time.Duration) (over275, over3 float64) {
	var a, b int
	for range n {
		var took time.Duration
		for {
			t1 := lo + time.Duration(r.Int64N(int64(hi-lo)))
			t2 := lo + time.Duration(r.Int64N(int64(hi-lo)))
			took += min(t1, t2)
			if d := t1 - t2; d >= lat || d <= -lat {
				break
			}
		}
		if took > 2750*time.Millisecond {
			a++
		}
		if took > 3*time.Second {
			b++
		}
	}
	return float64(a) / float64(n), float64(b) / float64(n)
}

// The figures docs/CLUSTERING.md gives for the narrower window ("The
// departed peer's long election"): with -v this test prints them; it
// checks that 1-1.5 s leaves fewer elections past 3 s than 1-2 s did,
// whatever a vote's latency, since two rounds of the new window fit 3 s.
func TestSplitVoteTail(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 2026))
	const n = 2_000_000
	for _, lat := range []time.Duration{2 * time.Millisecond, 5 * time.Millisecond} {
		old275, old3 := splitVoteTail(r, n, time.Second, 2*time.Second, lat)
		new275, new3 := splitVoteTail(r, n, raftElectionMin, raftElectionMax, lat)
		t.Logf("vote latency %v: over 2.75 s %.3f%% -> %.3f%%, over 3 s %.3f%% -> %.3f%%",
			lat, 100*old275, 100*new275, 100*old3, 100*new3)
		if new3 >= old3 {
			t.Errorf("latency %v: %.4f of elections past 3 s with %v..%v, not fewer than %.4f with 1..2 s",
				lat, new3, raftElectionMin, raftElectionMax, old3)
		}
	}
}
