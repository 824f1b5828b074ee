package hub

import "github.com/rankwire/rankwire/internal/streamwatch"

// Stream leader signals. In a cluster each tenant stream has a Raft leader
// on one server; JetStream announces every election and every loss of a
// stream's quorum with an advisory (internal/streamwatch.Leaders). The Hub
// counts them (metrics) and logs each, so an operator sees a failover
// happen and which server took over. A lone server sends none, and an
// account that may not subscribe to them is logged once.

// watchLeaders subscribes to both advisories of tenant streams for the
// Hub's life (the subscriptions end with its connection). Handlers run on
// the connection's delivery goroutine: they only count, log and end the
// tenant's publish attempts in flight (publish.go).
func (sl *streamLog) watchLeaders() {
	err := streamwatch.Leaders(sl.nc, streamPrefix, validName, streamwatch.LeaderEvents{
		Elected: func(t, leader string) {
			sl.votes.Elected(t)
			sl.nstats.LeaderChanges.Add(1)
			sl.log.Info("hub: stream leader elected", "tenant", t, "leader", leader)
		},
		Lost: func(t string) {
			sl.nstats.QuorumLost.Add(1)
			// JetStream sends this advisory at every election too (a
			// follower that learns of a new leader has reset what it
			// heard of its peers), so it names no lost majority by itself.
			sl.log.Warn("hub: stream quorum lost advisory: a replica lost its leader (an election, or no majority); the tenant's writes wait for a leader", "tenant", t)
		},
	})
	if err != nil {
		sl.log.Warn("hub: no stream leader advisories", "err", err)
	}
}
