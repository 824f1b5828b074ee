package clusterops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// Peer is a member of the JetStream meta group as its leader sees it.
type Peer struct {
	Name    string        `json:"name"`
	Leader  bool          `json:"leader,omitempty"` // it leads the meta group
	Online  bool          `json:"online"`           // not offline: its server is routed to the cluster
	Current bool          `json:"current"`          // heard from lately and caught up
	Lag     uint64        `json:"lag"`              // meta entries it is behind
	Seen    time.Duration `json:"last_seen_ns"`     // since the leader last heard from it; zero for the leader
}

// State is a peer's state in the words of the metrics
// (rankwire_cluster_meta_peers): online, behind (not current: a killed
// node shows so), offline (its server left cleanly).
func (p Peer) State() string {
	switch {
	case !p.Online:
		return "offline"
	case !p.Current:
		return "behind"
	}
	return "online"
}

// ErrNoMetaLeader is Peers's error class where no meta leader answered.
var ErrNoMetaLeader = errors.New("clusterops: no meta leader answered")

// jszReply is the part of a $SYS.REQ.SERVER.PING.JSZ answer Peers reads.
type jszReply struct {
	Server struct {
		Name string `json:"name"`
	} `json:"server"`
	Data *struct {
		Meta *struct {
			Leader   string `json:"leader"`
			Size     int    `json:"cluster_size"`
			Replicas []struct {
				Name    string        `json:"name"`
				Current bool          `json:"current"`
				Offline bool          `json:"offline"`
				Active  time.Duration `json:"active"`
				Lag     uint64        `json:"lag"`
			} `json:"replicas"`
		} `json:"meta_cluster"`
	} `json:"data"`
	Error *struct {
		Code        int    `json:"code"`
		Description string `json:"description"`
	} `json:"error"`
}

// Peers returns the meta group's members as its leader sees them (a
// follower does not track its peers), the leader first, asking the
// leader only ($SYS.REQ.SERVER.PING.JSZ, leader_only) on sys, a system
// account connection. One request.
func Peers(ctx context.Context, sys *nats.Conn) ([]Peer, error) {
	msg, err := sys.RequestWithContext(ctx, "$SYS.REQ.SERVER.PING.JSZ", []byte(`{"leader_only":true}`))
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders) {
		return nil, fmt.Errorf("%w: %w", ErrNoMetaLeader, err)
	}
	if err != nil {
		return nil, fmt.Errorf("clusterops: meta peers: %w", err)
	}
	var r jszReply
	if err := json.Unmarshal(msg.Data, &r); err != nil {
		return nil, fmt.Errorf("clusterops: meta peers: %w", err)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("clusterops: meta peers: %d %s", r.Error.Code, r.Error.Description)
	}
	if r.Data == nil || r.Data.Meta == nil {
		return nil, fmt.Errorf("%w: %s answered without the meta group", ErrNoMetaLeader, r.Server.Name)
	}
	m := r.Data.Meta
	out := []Peer{{Name: m.Leader, Leader: true, Online: true, Current: true}}
	for _, p := range m.Replicas {
		out = append(out, Peer{Name: p.Name, Online: !p.Offline, Current: p.Current, Lag: p.Lag, Seen: p.Active})
	}
	return out, nil
}

// Typed refusals of RemovePeer.
var (
	ErrPeerOnline  = errors.New("clusterops: the peer is online")
	ErrPeerSelf    = errors.New("clusterops: a node does not remove itself")
	ErrPeerUnknown = errors.New("clusterops: no such meta peer")
)

// RemovePeer removes the departed peer name from the meta group for good
// ($JS.API.SERVER.REMOVE on sys, a system account connection): it no
// longer counts in the majority, and the streams it held a replica of
// get one elsewhere where a node is free. It refuses self, a peer it
// does not know and one that is online (current; the meta leader's view):
// that one is removed by stopping it first. A removed node must not come
// back under its name with its old data.
func RemovePeer(ctx context.Context, sys *nats.Conn, self, name string) error {
	if name == self {
		return fmt.Errorf("%w (%s)", ErrPeerSelf, name)
	}
	peers, err := Peers(ctx, sys)
	if err != nil {
		return err
	}
	for _, p := range peers {
		if p.Name != name {
			continue
		}
		if p.State() == "online" {
			return fmt.Errorf("%w: %s is online and current; stop it first", ErrPeerOnline, name)
		}
		body, _ := json.Marshal(map[string]string{"peer": name})
		return metaRequest(ctx, sys, "$JS.API.SERVER.REMOVE", body)
	}
	return fmt.Errorf("%w: %q", ErrPeerUnknown, name)
}
