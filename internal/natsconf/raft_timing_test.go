package natsconf

import (
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
