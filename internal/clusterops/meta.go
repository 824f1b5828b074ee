package clusterops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// MetaHandoff is what StepDownMeta did with the JetStream meta group's
// leadership.
type MetaHandoff struct {
	Led    bool   // this node led the meta group when asked
	Leader string // the new meta leader, "" where none was seen in time
	Took   time.Duration
	Err    error // the leadership was not handed over
}

// ErrNotSystem is the class of the errors of a meta request sent on a
// connection that is not the system account's: nats-server ignores those,
// so it shows as a timeout.
var ErrNotSystem = errors.New("clusterops: the meta group answers the system account only")

// StepDownMeta hands the JetStream meta group's leadership to another
// peer where self holds it, and waits until ctx ends for leader (the meta
// leader as this node's server sees it, "" for none) to name another
// node. sys must be a connection of the system account: every request to
// the meta group ($JS.API.META.*) is the system account's. The meta
// leader places new streams and consumers and removes them: while it is
// gone (until the followers' election timeout when it stops without
// stepping down), a replica that re-creates its consumer waits.
// Cost: one request, then a call of leader every pollEvery.
func StepDownMeta(ctx context.Context, sys *nats.Conn, self string, leader func() string) MetaHandoff {
	return StepDownMetaTo(ctx, sys, self, "", leader)
}

// StepDownMetaTo is StepDownMeta naming the server to hand the leadership
// to, preferred ("": Raft's choice, any peer heard within its live window,
// which may be one this node can no longer reach).
func StepDownMetaTo(ctx context.Context, sys *nats.Conn, self, preferred string, leader func() string) MetaHandoff {
	start := time.Now()
	h := MetaHandoff{Led: leader() == self}
	if !h.Led {
		return h
	}
	if h.Err = metaRequest(ctx, sys, "$JS.API.META.LEADER.STEPDOWN", StepDownBody(preferred)); h.Err == nil {
		h.Leader, h.Err = awaitMetaLeader(ctx, self, leader)
	}
	h.Took = time.Since(start)
	return h
}

// metaRequest sends a system account request to the meta group and reads
// its answer's error.
func metaRequest(ctx context.Context, sys *nats.Conn, subject string, body []byte) error {
	msg, err := sys.RequestWithContext(ctx, subject, body)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
		return fmt.Errorf("clusterops: %s: no answer (%w): %w", subject, ErrNotSystem, err)
	}
	if err != nil {
		return fmt.Errorf("clusterops: %s: %w", subject, err)
	}
	return apiAnswer(subject, msg.Data)
}

// apiAnswer reads a JetStream API answer to a request on subject: its
// error, if it carries one.
func apiAnswer(subject string, data []byte) error {
	var r apiResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("clusterops: %s: %w", subject, err)
	}
	if r.Error != nil {
		return fmt.Errorf("clusterops: %s: %d %s", subject, r.Error.Code, r.Error.Description)
	}
	return nil
}

// awaitMetaLeader polls leader until it names a node other than self, or
// ctx ends.
func awaitMetaLeader(ctx context.Context, self string, leader func() string) (string, error) {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		if l := leader(); l != "" && l != self {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%w for the meta group: %w", ErrNoNewLeader, ctx.Err())
		case <-t.C:
		}
	}
}
