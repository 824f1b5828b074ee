package loadtest

import (
	"context"
	"time"
)

// A cluster's nodes are several server processes: FanoutConfig.Nodes names
// them, and the report's server figures (CPU, RSS) are their sums, with
// each node's memory beside them.

// Node is one server process of a cluster under load.
type Node struct {
	PID   int    `json:"pid"`   // its CPU and RSS are read from /proc
	Pprof string `json:"pprof"` // its --pprof host:port, for a collection before RSS readings; "" for none
}

// NodeMemory is one node's RSS before the subscribers came, once they
// were connected (both after a collection where the node has pprof) and
// at the end of the measured phase (as found), and its CPU over the
// measured phase.
type NodeMemory struct {
	PID          int     `json:"pid"`
	RSSIdle      int64   `json:"rss_idle"`
	RSSConnected int64   `json:"rss_connected"`
	RSSEnd       int64   `json:"rss_end"`
	Cores        float64 `json:"cores"`
}

// nodes is the server processes read: Nodes, or the one PID.
func (c FanoutConfig) nodes() []Node {
	if len(c.Nodes) > 0 {
		return c.Nodes
	}
	return []Node{{PID: c.PID, Pprof: c.Pprof}}
}

// collectAll runs a collection on every node that has pprof.
func (c FanoutConfig) collectAll(ctx context.Context) {
	for _, n := range c.nodes() {
		collectGarbage(ctx, n.Pprof)
	}
}

// sampleNodes reads every node: the sum (CPU and RSS; At now) and each.
// A node that cannot be read counts as zero.
func (c FanoutConfig) sampleNodes() (procSample, []procSample) {
	var sum procSample
	var each []procSample
	for _, n := range c.nodes() {
		s, _ := readProc(n.PID)
		sum.CPU += s.CPU
		sum.RSS += s.RSS
		each = append(each, s)
	}
	sum.At = time.Now()
	return sum, each
}

// nodeMemory pairs the samples of each node at the three moments.
func nodeMemory(nodes []Node, idle, conn, end []procSample) []NodeMemory {
	if len(nodes) < 2 {
		return nil // the report's own fields say it all
	}
	out := make([]NodeMemory, len(nodes))
	for i, n := range nodes {
		out[i] = NodeMemory{PID: n.PID, RSSIdle: idle[i].RSS, RSSConnected: conn[i].RSS, RSSEnd: end[i].RSS}
		if end[i].At.After(conn[i].At) {
			out[i].Cores = cores(conn[i], end[i])
		}
	}
	return out
}
