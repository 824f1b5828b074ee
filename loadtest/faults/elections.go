package faults

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"
)

// The suite marks the stream's leader at each cut and heal only; a
// leader deposed and re-elected in between (the cut follower's election
// in a bridge: docs/CLUSTERING.md, "The bridge's 3.007 s") was invisible
// on the timeline. Every node logs each election of Tenant's stream it
// sees ("hub: stream leader elected"); the run's timeline adds them.

// electedLine matches a node's log line of an election of Tenant's stream.
var electedLine = regexp.MustCompile(`^time=(\S+) level=INFO msg="hub: stream leader elected" tenant=` + Tenant + ` leader=(\S+)`)

// electionSpread is how far apart the nodes' lines of one election may
// be: each node logs it when its own advisory arrives.
const electionSpread = 500 * time.Millisecond

// parseElections returns the elections of Tenant's stream in a node's
// log, in order: each as an event of the node elected.
func parseElections(r io.Reader) []nodeEvent {
	var out []nodeEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := electedLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			continue
		}
		out = append(out, nodeEvent{at: at, node: m[2], what: "elected"})
	}
	return out
}

// mergeElections returns the elections of every node's log within
// from..to, each once: the earliest line of an election, where the nodes'
// lines naming the same leader within electionSpread are one election.
func mergeElections(logs [][]nodeEvent, from, to time.Time) []nodeEvent {
	var all []nodeEvent
	for _, l := range logs {
		all = append(all, l...)
	}
	slices.SortStableFunc(all, func(a, b nodeEvent) int { return a.at.Compare(b.at) })
	var out []nodeEvent
	for _, e := range all {
		if e.at.Before(from) || e.at.After(to) {
			continue
		}
		if slices.ContainsFunc(out, func(o nodeEvent) bool { return o.node == e.node && e.at.Sub(o.at) <= electionSpread }) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// withElections returns events with the elections of Tenant's stream that
// c's nodes logged between the first and the last of them, in order (a
// log that cannot be read adds none).
func withElections(c *Cluster, events []nodeEvent) []nodeEvent {
	if len(events) == 0 {
		return events
	}
	var logs [][]nodeEvent
	for _, n := range c.Nodes {
		f, err := os.Open(filepath.Join(c.Dir, n.Name+".log"))
		if err != nil {
			continue
		}
		logs = append(logs, parseElections(f))
		_ = f.Close()
	}
	out := append(slices.Clone(events), mergeElections(logs, events[0].at, events[len(events)-1].at)...)
	slices.SortStableFunc(out, func(a, b nodeEvent) int { return a.at.Compare(b.at) })
	return out
}
