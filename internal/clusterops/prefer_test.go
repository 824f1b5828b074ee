package clusterops

import "testing"

// The body names the server as nats-server reads a step-down's placement;
// without a name there is none, and Raft chooses.
func TestStepDownBody(t *testing.T) {
	if got := string(StepDownBody("n3")); got != `{"placement":{"preferred":"n3"}}` {
		t.Errorf("StepDownBody(n3) = %s", got)
	}
	if got := StepDownBody(""); got != nil {
		t.Errorf("StepDownBody(\"\") = %s, want nil", got)
	}
}
