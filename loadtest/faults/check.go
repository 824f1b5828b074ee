package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	rwclient "github.com/rankwire/rankwire/client"
)

// Violation is a broken invariant the checker found.
type Violation string

// readTop reads the board's top 1,000 on node n alone (no failover).
func readTop(ctx context.Context, c *Cluster, n *Node) (rwclient.Page, error) {
	cl, err := rwclient.New([]string{n.URL()}, rwclient.WithToken(c.Token))
	if err != nil {
		return rwclient.Page{}, err
	}
	pg, err := cl.Top(ctx, Board, rwclient.ReadOptions{Limit: 1000})
	if rwclient.IsCode(err, "not_found") {
		return rwclient.Page{}, nil // the board itself lost: every writer's count is 0
	}
	return pg, err
}

// settledPages waits up to limit until every node answers the same top
// page, byte for byte, and returns it; else the pages' difference.
func settledPages(ctx context.Context, c *Cluster, limit time.Duration) (rwclient.Page, error) {
	deadline := time.Now().Add(limit)
	for {
		first, err := samePages(ctx, c)
		if err == nil {
			return first, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return rwclient.Page{}, fmt.Errorf("nodes not equal %v after the load: %w", limit, err)
		}
		time.Sleep(200 * time.Millisecond) // polling the nodes: nothing to await but their answers
	}
}

// samePages reads every node's top page and compares their encodings.
func samePages(ctx context.Context, c *Cluster) (rwclient.Page, error) {
	var first rwclient.Page
	var want []byte
	for i, n := range c.Nodes {
		pg, err := readTop(ctx, c, n)
		if err != nil {
			return first, fmt.Errorf("%s: %w", n.Name, err)
		}
		b, err := json.Marshal(pg)
		if err != nil {
			return first, err
		}
		if i == 0 {
			first, want = pg, b
		} else if !bytes.Equal(b, want) {
			return first, fmt.Errorf("%s answers seq %d, %s seq %d", n.Name, pg.Seq, c.Nodes[0].Name, first.Seq)
		}
	}
	return first, nil
}

// check verifies the settled cluster against the writers' records: every
// writer's member counts between its acknowledged submissions and those
// plus its unresolved calls (fewer: an acknowledged one lost; more: one
// applied twice). It adds the violations and the submissions lost and
// applied twice to res.
func check(ctx context.Context, c *Cluster, l *Load, res *Result) {
	pg, err := settledPages(ctx, c, 60*time.Second)
	if err != nil {
		res.Violations = append(res.Violations, Violation(err.Error()))
		return
	}
	scores := map[string]float64{}
	for _, r := range pg.Rows {
		scores[r.Member] = r.Score
	}
	for _, w := range l.writers {
		got := int(scores[w.member])
		switch {
		case got < w.acked:
			res.Lost += w.acked - got
			res.Violations = append(res.Violations, Violation(fmt.Sprintf("%s: %d applied, %d acknowledged: %d lost", w.member, got, w.acked, w.acked-got)))
		case got > w.acked+w.unsure:
			res.Twice += got - w.acked - w.unsure
			res.Violations = append(res.Violations, Violation(fmt.Sprintf("%s: %d applied, %d acknowledged + %d unresolved: applied twice",
				w.member, got, w.acked, w.unsure)))
		}
	}
}
