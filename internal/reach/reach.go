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
//   - Is a peer this node misses alive beyond a broken route (Relayed)?
//     Another peer heard it since: this node's elections against it would
//     only depose a leader that still has a majority.
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
// its silence bound when it sent the beat, each with how long before.
// Leaving marks a node's last beat before a clean stop (Table.Heard); a
// beat without it (an older node's) is an ordinary beat.
type Beat struct {
	Node    string  `json:"node"`
	Hears   []Heard `json:"hears,omitempty"`
	Leaving bool    `json:"leaving,omitempty"`
}

// Heard is a peer of a beat's sender: how long before the beat the sender
// last heard it, and for how long it has heard it without a silence (in
// the sender's clock: durations, so the nodes' clocks need not agree), and
// whether that peer's last beat named the sender among those it hears
// (Back: the peer hears the sender too). A beat without Back (an older
// node's) counts as false: no bridge is built on it.
type Heard struct {
	Node  string `json:"node"`
	AgoMS int64  `json:"ago_ms"`
	ForMS int64  `json:"for_ms"`
	Back  bool   `json:"back,omitempty"`
}

// seen is when a peer of a beat's sender was heard, in this node's clock:
// last, and first since its last silence; back says the peer heard the
// sender too, by its last beat.
type seen struct {
	last, first time.Time
	back        bool
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
	margin  time.Duration              // how much later a peer must have heard another than this node did: a beat and a half
	relay   time.Duration              // how long a peer heard by another must be silent here to be Relayed: two beats
	nudge   time.Duration              // how much later another must have heard it for Relayed: half a beat
	quiet   time.Duration              // a gap between any two beats heard longer than this (two beats) is this node's own pause
	lastAny time.Time                  // when the last beat of any peer arrived
	resumed time.Time                  // when this node last heard a beat after a pause (quiet)
	last    map[string]time.Time       // peer → when its last beat arrived
	first   map[string]time.Time       // peer → its first beat since its last silence
	hears   map[string]map[string]seen // peer → whom it heard and when, as of its last beat
}

// New returns the table of node self in a cluster of members servers
// (itself included; at least 1) whose nodes beat every beat: a peer
// counts as heard for silence after its last beat.
func New(self string, members int, silence, beat time.Duration) *Table {
	return &Table{self: self, members: max(members, 1), silence: silence, margin: beat * 3 / 2, quiet: 2 * beat,
		relay: 2 * beat, nudge: beat / 2,
		last: map[string]time.Time{}, first: map[string]time.Time{}, hears: map[string]map[string]seen{}}
}

// Silence is the bound after which a peer no longer counts as heard.
func (t *Table) Silence() time.Duration { return t.silence }

// Heard records b, arrived at at. This node's own beat (which NATS also
// delivers to it) is ignored. A leaving beat (a clean stop's last) makes
// the table forget its sender at once, as Remove: the sender no longer
// raises the count of the cluster's servers above the configured members
// (View.Of), and its silence is no partition (no bridge is built on it).
// A configured member that stops still counts, through the members floor
// of Of: a member stopped for a rolling restart is still one of the
// cluster's servers, so that a partition during the restart is still
// detected (two of three heard while the third restarts is a majority;
// one is not).
func (t *Table) Heard(b Beat, at time.Time) {
	if b.Node == t.self {
		return
	}
	if b.Leaving {
		t.Remove(b.Node)
		return
	}
	if !t.live(b.Node, at) {
		t.first[b.Node] = at
	}
	if !t.lastAny.IsZero() && at.Sub(t.lastAny) > t.quiet {
		t.resumed = at
	}
	t.last[b.Node] = at
	t.lastAny = at
	h := make(map[string]seen, len(b.Hears))
	for _, p := range b.Hears {
		h[p.Node] = seen{last: at.Add(-time.Duration(p.AgoMS) * time.Millisecond), first: at.Add(-time.Duration(p.ForMS) * time.Millisecond), back: p.Back}
	}
	t.hears[b.Node] = h
}

// View is what this node hears at one instant: everything a beat needs,
// computed once from one reading of the table (Table.View).
type View struct {
	Hears  []string // the peers heard within silence, sorted
	Heard  int      // the cluster's servers heard within silence, this node included
	Of     int      // of how many: the configured members, or more where more peers were heard within Forget and neither removed nor left (Remove)
	Bridge string   // the peer to hand this node's leaderships to where the partition is non-transitive (see bridge), or none
	Beat   Beat     // this node's beat
	// Relayed are the peers this node misses that another peer heard
	// since (see relayed), sorted: alive beyond a broken route of this
	// node's, so its Raft groups led by them must not start elections.
	Relayed []string
}

// View returns what this node hears at now. A pure read: peers silent
// for longer than Forget no longer count, whether or not Prune dropped
// them yet. O(peers × missing peers).
func (t *Table) View(now time.Time) View {
	v := View{Hears: t.Hears(now), Beat: Beat{Node: t.self}}
	for _, p := range v.Hears {
		_, back := t.hears[p][t.self]
		v.Beat.Hears = append(v.Beat.Hears, Heard{Node: p, AgoMS: now.Sub(t.last[p]).Milliseconds(), ForMS: now.Sub(t.first[p]).Milliseconds(), Back: back})
	}
	known := 0
	for p := range t.last {
		if t.known(p, now) {
			known++
		}
	}
	v.Heard, v.Of = len(v.Hears)+1, max(t.members, known+1)
	if !CutOff(v.Heard, v.Of) {
		v.Bridge = t.bridge(now, v.Hears)
	}
	v.Relayed = t.relayed(now, v.Hears)
	return v
}

// Remove forgets peer at once: a peer taken out of the cluster (`gateway
// cluster remove`) or stopped cleanly (a leaving beat) counts no longer,
// beyond the configured members, rather than for Forget after its last
// beat. A later beat of peer (it joined again) counts it again.
func (t *Table) Remove(peer string) {
	delete(t.last, peer)
	delete(t.first, peer)
	delete(t.hears, peer)
}

// Prune drops the peers silent for longer than Forget before now: the
// table's memory of a node that left. O(peers). Its owner calls it once
// a beat; reads do not write.
func (t *Table) Prune(now time.Time) {
	for p := range t.last {
		if !t.known(p, now) {
			t.Remove(p)
		}
	}
}

// known reports whether peer was heard within Forget before now.
func (t *Table) known(peer string, now time.Time) bool { return now.Sub(t.last[peer]) <= Forget }

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

// Forget is how long a peer beyond the configured members still counts
// after its last beat: a node that joined and died (or whose leaving beat
// or removal this node missed) stops raising the majority, while one cut
// off for a few minutes still counts. A clean stop or a removal is
// forgotten at once (Remove).
const Forget = 10 * time.Minute

// CutOff reports whether this node hears from fewer than a majority of
// the cluster's servers, itself included.
func CutOff(heard, of int) bool { return heard*2 <= of }

// bridge returns the peer to hand this node's leaderships to where the
// partition is non-transitive: this node hears a majority but no longer
// hears some peers (silent for longer than silence), and a peer that this
// node has heard for silence without a break hears this node and, by its
// last beat, has heard every peer this node misses without a break since
// before this node lost it, later by more than a beat and a half (so it
// heard beats of theirs that never reached this node), and heard back from
// each (their last beat named it: the new leader reaches them). Not a
// bridge: a peer that died or is cut from everyone (silent for all at
// once), nor a heal under way (the beats of the healed routes arrive a few
// hundred milliseconds apart: a peer heard again only just), nor a load
// that delays one route's beats for less than silence, nor a peer that
// hears nobody (a starved or cut-off node whose beats still go out: handing
// the leadership on reaches it no better, and costs an election), nor
// what this node sees within silence after a pause of its own (no beat
// from anyone for two beats, then a burst: the routes' backlogs are read
// one after the other, so a peer's fresh beat names others whose beats to
// this node still wait; or no beat for two beats until now). Empty
// where there is none, or where this node is cut off (the majority side
// elects without it: View does not ask). Of several, the first by name.
// hears is Hears(now).
func (t *Table) bridge(now time.Time, hears []string) string {
	if now.Sub(t.lastAny) > t.quiet || now.Sub(t.resumed) < t.silence {
		return "" // this node paused: its table is behind its routes
	}
	var missing []string
	for p, at := range t.last {
		if now.Sub(at) > t.silence && t.known(p, now) {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return "" // some members never heard: nothing to compare
	}
	for _, p := range hears {
		h := t.hears[p]
		if _, ok := h[t.self]; !ok || now.Sub(t.first[p]) < t.silence {
			continue
		}
		sees := func(m string) bool {
			s, ok := h[m]
			return ok && s.back && !s.first.After(t.last[m]) && s.last.Sub(t.last[m]) > t.margin
		}
		if !slices.ContainsFunc(missing, func(m string) bool { return !sees(m) }) {
			return p
		}
	}
	return ""
}

// relayed returns the peers this node has not heard for two beats that a
// peer it hears has heard since, later than this node last did by more
// than half a beat (a beat of theirs that never reached this node) and
// within the silence: alive, beyond a route of this node's that is broken
// or slow. Sorted; O(peers × silent peers).
//
// Its use is the reverse of bridge's: not to act, but to refrain from
// acting. In a non-transitive partition the follower cut from its
// stream's leader starts an election after its Raft timeout (1-1.5 s),
// before the leader's handover (bridge: the silence, then the next beat)
// can move the leadership; its vote request, of a higher term, makes the
// other follower drop the leader (nats-server's Raft has no pre-vote) and
// the stream has no leader until the next timeout (docs/CLUSTERING.md,
// "The bridge's 3.148 s"). Holding such a node back from elections
// against a leader that a majority still hears costs nothing: that
// majority goes on, and elects without this node where the leader dies,
// for a peer that dies or is cut from everyone is silent for all at once
// (the others' beats name it no later than this node heard it: never
// relayed), and one relayed stops being so once the others' beats stop
// naming it, within the silence. So it is judged sooner than a bridge:
// two beats, under the election's timeout, and a single later beat of
// the missing peer's, heard elsewhere, is enough. Unlike bridge it holds
// after a pause of this node's too: a peer's fresh beat naming a third
// whose beats to this node still wait makes this node refrain for a beat
// or two, nothing more.
func (t *Table) relayed(now time.Time, hears []string) []string {
	var out []string
	for m, at := range t.last {
		if now.Sub(at) <= t.relay || !t.known(m, now) {
			continue
		}
		for _, p := range hears {
			if s, ok := t.hears[p][m]; ok && s.last.Sub(at) > t.nudge && now.Sub(s.last) <= t.silence {
				out = append(out, m)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}
