package main

import (
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// One view of the embedded server's streams (issue 25). The beats'
// election holds (peers.go, ledBy), a bridge's handover (handOn), the
// prober's count of a leaderless stream's replicas (quorum.go) and the
// cluster metrics each read every account's streams from the server (one
// Jsz: O(streams), under the server's locks), and during a fault they all
// do at once; streamView reads it at most once per beat and hands that
// reading to every reader within the beat.
//
// It also remembers each stream's members (its leader and other
// replicas) from the last answer in which the stream had a leader: this
// node's server's, for the streams it hosts a replica of, and the
// leaders' answers to the prober's stream info requests, for all. A node
// that hosts no replica of a stream whose leader died can then count the
// replicas it still hears as soon as the beats say the others are gone
// (beatSilence), rather than once the surviving replica answers as
// leaderless, after its election timeout: a second or two later, which
// took kill9-two past the 3 s bound (docs/BENCHMARKS.md).
//
// A remembered list can be stale only where the stream was scaled or
// moved and its new leader has not answered since: every newer answer
// with a leader replaces it. It is read only for a stream with no
// reachable leader (countReplicas), so a stale list can make such a
// stream count at once rather than after --ready-hold (a removed peer
// counted as an unreachable replica), or after the hold rather than at
// once (a new replica not counted); it can never fail a stream whose
// leader answers, so it cannot make a healthy node unready.

// streamView is the embedded server's streams, read at most once per
// `every`, and each stream's members at its last answer with a leader.
// Safe for concurrent use.
type streamView struct {
	srv   *server.Server
	every time.Duration // how long one reading serves: a beat

	mu      sync.Mutex // guards the fields below; held across a reading, so that readers at once share it
	at      time.Time  // the last reading; zero: none yet
	info    *server.JSInfo
	err     error
	members map[string][]string // stream → its members at its last answer with a leader, leader first
}

// newStreamView returns the view of srv, read at most once a beat.
func newStreamView(srv *server.Server) *streamView {
	return &streamView{srv: srv, every: beatEvery, members: map[string][]string{}}
}

// streams returns every account's streams with their cluster details, as
// read from the server at most a beat ago (one Jsz where older; its
// error is kept as long). The answer is shared by every reader: read it
// only.
func (v *streamView) streams() (*server.JSInfo, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := time.Now()
	if v.at.IsZero() || now.Sub(v.at) >= v.every {
		v.info, v.err = v.srv.Jsz(&server.JSzOptions{Accounts: true, Streams: true})
		v.at = now
		if v.err == nil {
			v.rememberHostedLocked()
		}
	}
	return v.info, v.err
}

// rememberHostedLocked remembers the members of every replicated stream
// this node hosts that has a leader in the reading.
func (v *streamView) rememberHostedLocked() {
	self := v.srv.Name()
	for _, a := range v.info.AccountDetails {
		for _, s := range a.Streams {
			c := s.Cluster
			if c == nil || c.Leader == "" || len(c.Replicas) == 0 {
				continue
			}
			// The server lists the replicas other than this node, the
			// leader among them where it is not this node.
			names := []string{c.Leader, self}
			for _, r := range c.Replicas {
				names = append(names, r.Name)
			}
			v.members[s.Name] = uniq(names)
		}
	}
}

// remember replaces stream's members with names (its leader first), from
// an answer with a leader.
func (v *streamView) remember(stream string, names []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.members[stream] = uniq(names)
}

// membersOf returns stream's members at its last answer with a leader, or
// nil.
func (v *streamView) membersOf(stream string) []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.members[stream]
}

// retain forgets the members of every stream keep rejects: the streams of
// tenants no longer open here.
func (v *streamView) retain(keep func(stream string) bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for s := range v.members {
		if !keep(s) {
			delete(v.members, s)
		}
	}
}

// uniq returns names without repeats or empty names, in their first
// order, in a new slice: a remembered list is never shared with a caller
// that may append to its own.
func uniq(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
