// Package reach tracks which of a cluster's servers this node hears from,
// directly, from the beats every node publishes on the cluster's NATS
// (cmd/gateway, peers.go): NATS does not forward a message between
// routes, so a beat arrives only over the route between its sender and
// this node. From that it answers two questions a node cannot answer from
// its Raft groups alone (docs/CLUSTERING.md, "Cut off or electing"):
//
//   - Is this node cut off? It hears from fewer than a majority of the
//     cluster's servers, itself included. A node during the election that
//     follows a peer's death still hears from a majority; a node behind a
//     partition does not.
//   - Is the partition non-transitive? This node misses a peer that
//     another peer still hears (a bridge): that other peer, hearing every
//     server, is the one to lead.
//
// Pure: no clock, no goroutines, no I/O; every time comes in an argument.
// Not safe for concurrent use: one goroutine owns a Table.
package reach

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Beat is one node's beat: its name and the peers it heard from within
// its silence bound when it sent the beat.
type Beat struct {
	Node  string   `json:"node"`
	Hears []string `json:"hears,omitempty"`
}

// maxBeat bounds a beat's encoding: a name is at most a few dozen bytes and
// a cluster a few dozen nodes.
const maxBeat = 64 << 10

// Marshal encodes b for the wire.
func (b Beat) Marshal() []byte {
	out, _ := json.Marshal(b) // strings only: cannot fail
	return out
}

// ErrBeat is the class of undecodable beats.
var ErrBeat = errors.New("reach: bad beat")

// ParseBeat decodes a beat from the wire.
func ParseBeat(data []byte) (Beat, error) {
	var b Beat
	if len(data) > maxBeat {
		return b, fmt.Errorf("%w: %d bytes, more than %d", ErrBeat, len(data), maxBeat)
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return b, fmt.Errorf("%w: %v", ErrBeat, err)
	}
	if b.Node == "" {
		return b, fmt.Errorf("%w: no node name", ErrBeat)
	}
	return b, nil
}

// Table is what this node heard from its peers.
type Table struct {
	self    string
	members int
	silence time.Duration
	last    map[string]time.Time // peer → when its last beat arrived
	hears   map[string][]string  // peer → whom it heard, as of its last beat
}

// New returns the table of node self in a cluster of members servers
// (itself included; at least 1): a peer counts as heard for silence after
// its last beat.
func New(self string, members int, silence time.Duration) *Table {
	return &Table{self: self, members: max(members, 1), silence: silence,
		last: map[string]time.Time{}, hears: map[string][]string{}}
}

// Silence is the bound after which a peer no longer counts as heard.
func (t *Table) Silence() time.Duration { return t.silence }

// Heard records b, arrived at at. This node's own beat (which NATS also
// delivers to it) is ignored.
func (t *Table) Heard(b Beat, at time.Time) {
	if b.Node == t.self {
		return
	}
	t.last[b.Node] = at
	t.hears[b.Node] = b.Hears
}

// live reports whether peer was heard within silence before now.
func (t *Table) live(peer string, now time.Time) bool {
	at, ok := t.last[peer]
	return ok && now.Sub(at) <= t.silence
}

// Hears returns the peers heard within silence before now, sorted.
func (t *Table) Hears(now time.Time) []string {
	var out []string
	for p := range t.last {
		if t.live(p, now) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// Of is the cluster's size: the configured members, or more where more
// distinct peers were heard.
func (t *Table) Of() int { return max(t.members, len(t.last)+1) }

// Reach returns how many of the cluster's servers this node heard from
// within silence before now, itself included, and of how many.
func (t *Table) Reach(now time.Time) (heard, of int) {
	return len(t.Hears(now)) + 1, t.Of()
}

// CutOff reports whether this node hears from fewer than a majority of
// the cluster's servers, itself included.
func CutOff(heard, of int) bool { return heard*2 <= of }

// Bridge returns the peer to hand this node's leaderships to where the
// partition is non-transitive: this node hears a majority but misses some
// peers, and a live peer both hears this node and every peer this node
// misses (by its last beat). Empty where there is none: this node hears
// everyone, or it is cut off (the majority side elects without it), or no
// peer sees more than it does. Of several, the first by name.
func (t *Table) Bridge(now time.Time) string {
	heard, of := t.Reach(now)
	if heard == of || CutOff(heard, of) {
		return ""
	}
	var missing []string
	for p := range t.last {
		if !t.live(p, now) {
			missing = append(missing, p)
		}
	}
	for _, p := range t.Hears(now) {
		hears := t.hears[p]
		if slices.Contains(hears, t.self) && !slices.ContainsFunc(missing, func(m string) bool { return !slices.Contains(hears, m) }) &&
			len(hears)+1 > heard {
			return p
		}
	}
	return ""
}
