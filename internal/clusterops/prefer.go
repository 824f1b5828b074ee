package clusterops

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"
)

// StepDownBody is the body of a JetStream leader step-down request that
// names the server to hand the leadership to; nil for "": Raft's choice,
// any peer heard within its live window (several seconds), which in a
// non-transitive partition may be one this node no longer reaches: the
// leadership is then lost to nobody and comes back to this node at the
// next election.
func StepDownBody(preferred string) []byte {
	if preferred == "" {
		return nil
	}
	type placement struct {
		Preferred string `json:"preferred"`
	}
	b, _ := json.Marshal(map[string]placement{"placement": {preferred}}) // strings only: cannot fail
	return b
}

// StepDownStreamTo asks the leader of stream (this node, in-process: no
// route is crossed) to hand its leadership to the server named preferred,
// on nc, a connection of the stream's account. It returns once the leader
// answered, not once the new leader took over. Cost: one request.
func StepDownStreamTo(ctx context.Context, nc *nats.Conn, stream, preferred string) error {
	subject := "$JS.API.STREAM.LEADER.STEPDOWN." + stream
	msg, err := nc.RequestWithContext(ctx, subject, StepDownBody(preferred))
	if err != nil {
		return fmt.Errorf("clusterops: %s: %w", subject, err)
	}
	return apiAnswer(subject, msg.Data)
}
