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
