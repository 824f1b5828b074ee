package streamwatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
)

// The subjects of JetStream's advisories that a stream's Raft leader was
// elected and that a stream lost its quorum; their last token is the
// stream's name. Only a clustered JetStream sends them.
const (
	leaderElected = "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED."
	quorumLost    = "$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST."
)

// LeaderEvents receives the leader advisories of the streams Leaders
// watches, by the name after the prefix. Both run on the connection's
// delivery goroutine: they must not block. A nil one is not called.
type LeaderEvents struct {
	Elected func(name, leader string) // leader: the server that now leads the stream
	Lost    func(name string)         // the stream's writes wait for a majority of its replicas
}

// leaderAdvisory is the part of a leader-elected advisory Leaders reads.
type leaderAdvisory struct {
	Leader string `json:"leader"`
}

// Leaders subscribes to the leader-elected and quorum-lost advisories of
// the streams named prefix+name for which keep(name), for the life of nc.
// An error (an account that may not subscribe to advisories) names the
// subjects refused; the others are subscribed all the same.
func Leaders(nc *nats.Conn, prefix string, keep func(name string) bool, ev LeaderEvents) error {
	name := func(subject, advisory string) (string, bool) {
		n, ok := strings.CutPrefix(strings.TrimPrefix(subject, advisory), prefix)
		return n, ok && keep(n)
	}
	elected := func(m *nats.Msg) {
		if n, ok := name(m.Subject, leaderElected); ok && ev.Elected != nil {
			var a leaderAdvisory
			_ = json.Unmarshal(m.Data, &a) // a leader not named is reported empty
			ev.Elected(n, a.Leader)
		}
	}
	lost := func(m *nats.Msg) {
		if n, ok := name(m.Subject, quorumLost); ok && ev.Lost != nil {
			ev.Lost(n)
		}
	}
	var errs []error
	for subj, f := range map[string]nats.MsgHandler{leaderElected + "*": elected, quorumLost + "*": lost} {
		if _, err := nc.Subscribe(subj, f); err != nil {
			errs = append(errs, fmt.Errorf("streamwatch: subscribe %s: %w", subj, err))
		}
	}
	return errors.Join(errs...)
}
