package faults

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A cutPlan returns the pairs of node indexes to cut, given the leader's
// index and the node count, and the nodes the cut touches (exempt from the
// /readyz count, not from the stale-read one): a node on the minority side,
// and both ends of a cut between two nodes that each still hear a
// majority (their views of the cluster disagree, so a 503 while their
// streams move is the truth). A node that only loses a peer cut from
// everyone is not touched: it sees what it sees when that peer dies.
type cutPlan func(leader, n int) (pairs [][2]int, exempt []int)

// isolateLeader cuts the leader from every other node: it is the minority.
func isolateLeader(leader, n int) ([][2]int, []int) {
	var pairs [][2]int
	for k := range n {
		if k != leader {
			pairs = append(pairs, [2]int{leader, k})
		}
	}
	return pairs, []int{leader}
}

// isolateFollower cuts one follower from every other node: the leader
// stays on the majority side.
func isolateFollower(leader, n int) ([][2]int, []int) {
	f := (leader + 1) % n
	var pairs [][2]int
	for k := range n {
		if k != f {
			pairs = append(pairs, [2]int{f, k})
		}
	}
	return pairs, []int{f}
}

// bridgeCut cuts the leader from one follower only: the other follower
// still sees both (a non-transitive partition). Both ends of the cut are
// touched; the node that hears both is counted.
func bridgeCut(leader, n int) ([][2]int, []int) {
	f := (leader + 1) % n
	return [][2]int{{leader, f}}, []int{leader, f}
}

// partition applies plan around the current leader for Hold, then heals
// it and waits until every node is ready again.
func (r *run) partition(ctx context.Context, plan cutPlan) error {
	if r.c.net == nil {
		return errors.New("faults: a partition needs the nodes in network namespaces")
	}
	l, err := r.c.Leader(ctx, 20*time.Second)
	if err != nil {
		return err
	}
	pairs, exempt := plan(l.index, len(r.c.Nodes))
	for _, k := range exempt {
		r.setExempt(r.c.Nodes[k], true)
	}
	r.cfg.Log.Info("partition", "leader", l.Name, "pairs", pairs)
	var cutErr error
	for _, p := range pairs {
		if cutErr = r.c.net.cut(p[0], p[1]); cutErr != nil {
			break
		}
		r.markPair(l, p, "cut from")
	}
	if cutErr == nil {
		sleep(ctx, r.cfg.Hold)
	}
	for _, p := range pairs {
		if r.c.net.heal(p[0], p[1]) == nil { // a pair never cut fails to heal: nothing to undo
			r.markPair(l, p, "healed with")
		}
	}
	if cutErr != nil {
		return cutErr
	}
	for _, k := range exempt {
		if err := r.c.WaitReady(ctx, r.c.Nodes[k], 60*time.Second); err != nil {
			return err
		}
		r.tl.mark(r.c.Nodes[k], "ready")
		r.setExempt(r.c.Nodes[k], false)
	}
	return nil
}

// markPair puts a cut or a heal of pair p on the run's timeline with the
// leader's name, so that the run's write gaps are placed among them ("n3
// cut from n1, n3 leading"; a writer's requests name node n<k> by its
// address 10.213.x.<k>).
func (r *run) markPair(leader *Node, p [2]int, what string) {
	r.tl.mark(r.c.Nodes[p[0]], fmt.Sprintf("%s %s, %s leading", what, r.c.Nodes[p[1]].Name, leader.Name))
}
