package client

import "testing"

// TestGoldenHeartbeatIgnored: the golden heartbeat, a message type Watch
// has no use for yet, decodes as Watch decodes every message and leaves
// the view as it was, without an error (clients ignore types they do not
// act on).
func TestGoldenHeartbeatIgnored(t *testing.T) {
	st, err := apply(nil, serverMessage(t, "snapshot"))
	if err != nil || st == nil {
		t.Fatalf("snapshot: %v %v", st, err)
	}
	m := serverMessage(t, "heartbeat")
	if m.Type != "heartbeat" || m.Seq == 0 || !m.Writable || m.At == "" {
		t.Fatalf("heartbeat decoded as %+v", m)
	}
	if next, err := apply(st, m); err != nil || next != st {
		t.Fatalf("heartbeat: state %v (was %v), %v; want it unchanged", next, st, err)
	}
}

// TestResumeAtTheSameSeqYieldsNothing: a Watch that resumes from the seq
// it holds gets that seq back (an empty diff, or a snapshot from a gateway
// that does not keep the changes): the state is not yielded again, so a
// caller never sees a seq twice (TestWatchFailover once saw [1 1 2 3]).
func TestResumeAtTheSameSeqYieldsNothing(t *testing.T) {
	st, err := apply(nil, serverMessage(t, "snapshot"))
	if err != nil {
		t.Fatal(err)
	}
	again := serverMessage(t, "snapshot")
	if next, err := apply(st, again); err != nil || next != st {
		t.Fatalf("a snapshot at the seq held: %v, %v; want the state unchanged", next, err)
	}
	prev := st.seq
	empty := again
	empty.Type, empty.Prev, empty.Rows = "diff", &prev, nil
	if next, err := apply(st, empty); err != nil || next != st {
		t.Fatalf("an empty diff from the seq held: %v, %v; want the state unchanged", next, err)
	}
}
