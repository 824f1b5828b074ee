package hub

import (
	"encoding/json"
	"strings"

	"github.com/nats-io/nats.go"
)

// Stream leader signals. In a cluster each tenant stream has a Raft leader
// on one server; JetStream announces every election and every loss of a
// stream's quorum with an advisory. The Hub counts them (metrics) and logs
// each, so an operator sees a failover happen and which server took over.
// Advisories arrive only from a clustered JetStream; a lone server sends
// none, and an account that may not subscribe to them is logged once.

const (
	leaderElected = "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED."
	quorumLost    = "$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST."
)

// leaderAdvisory is the part of a leader-elected advisory the Hub reads.
type leaderAdvisory struct {
	Leader string `json:"leader"`
}

// watchLeaders subscribes to both advisories of tenant streams for the
// Hub's life (the subscriptions end with its connection). Handlers run on
// the connection's delivery goroutine: they only count and log.
func (sl *streamLog) watchLeaders() {
	elected := func(m *nats.Msg) {
		t, ok := tenantOfAdvisory(m.Subject, leaderElected)
		if !ok {
			return
		}
		var a leaderAdvisory
		_ = json.Unmarshal(m.Data, &a)
		sl.nstats.LeaderChanges.Add(1)
		sl.log.Info("hub: stream leader elected", "tenant", t, "leader", a.Leader)
	}
	lost := func(m *nats.Msg) {
		t, ok := tenantOfAdvisory(m.Subject, quorumLost)
		if !ok {
			return
		}
		sl.nstats.QuorumLost.Add(1)
		sl.log.Warn("hub: stream quorum lost: the tenant's writes wait for a majority of its replicas", "tenant", t)
	}
	for subj, f := range map[string]nats.MsgHandler{leaderElected + "*": elected, quorumLost + "*": lost} {
		if _, err := sl.nc.Subscribe(subj, f); err != nil {
			sl.log.Warn("hub: no stream leader advisories", "subject", subj, "err", err)
		}
	}
}

// tenantOfAdvisory returns the tenant whose stream an advisory subject
// under prefix names, or false for another stream.
func tenantOfAdvisory(subject, prefix string) (string, bool) {
	t, ok := strings.CutPrefix(strings.TrimPrefix(subject, prefix), streamPrefix)
	return t, ok && validName(t)
}
