package natsconf

import "testing"

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
