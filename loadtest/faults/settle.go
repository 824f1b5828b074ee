package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// settleQuiet is how long the tenant stream's last sequence must stay put,
// read twice this far apart, before a run counts as settled. It is longer
// than a gateway's longest pause between the retries of one publish (1 s,
// docs/OPERATIONS.md "When NATS fails"): a write a gateway still retries
// after the writers' calls returned shows as a move.
const settleQuiet = 2 * time.Second

// settleLimit bounds settle, as the checker was bounded before it read
// the stream.
const settleLimit = 60 * time.Second

// settled is the cluster's final state: every node applied seq, the
// stream's last sequence, which did not move across settleQuiet; state is
// every node's boards and full standings, read while the node's applied
// sequence was seq before and after, and equal byte for byte.
type settled struct {
	seq   uint64 // the stream's last sequence
	state []boardState
	took  time.Duration // from settle's call to the round that settled
}

// settleProbe is how settle reads a cluster: the stream's last sequence
// (JetStream's own answer), node i's applied one, node i's state.
type settleProbe struct {
	nodes   []string
	last    func(ctx context.Context) (uint64, error)
	applied func(ctx context.Context, i int) (uint64, error)
	state   func(ctx context.Context, i int) ([]boardState, error)
	quiet   time.Duration
	every   time.Duration // the pause between rounds; zero: 200 ms
}

// clusterProbe reads c's running nodes: the stream's last sequence from
// JetStream (Cluster.streamLast), the applied one from each node's
// rankwire_applied_sequence, the state through its API alone (readState).
func clusterProbe(c *Cluster) settleProbe {
	hc := &http.Client{Timeout: 2 * time.Second}
	p := settleProbe{last: c.streamLast, quiet: settleQuiet}
	for _, n := range c.Nodes {
		p.nodes = append(p.nodes, n.Name)
	}
	p.applied = func(ctx context.Context, i int) (uint64, error) { return appliedSeq(ctx, hc, c.Nodes[i]) }
	p.state = func(ctx context.Context, i int) ([]boardState, error) { return readState(ctx, c, c.Nodes[i]) }
	return p
}

// settle waits up to limit until a round finds the cluster settled
// (settleProbe.round) and returns its state; else the last round's reason.
// The writers' calls must all have returned (StopLoad) before.
func settle(ctx context.Context, p settleProbe, limit time.Duration) (settled, error) {
	t0 := time.Now()
	deadline := t0.Add(limit)
	for {
		s, err := p.round(ctx)
		if err == nil {
			s.took = time.Since(t0)
			return s, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return settled{}, fmt.Errorf("nodes not settled %v after the load: %w", limit, err)
		}
		sleep(ctx, cmp(p.every, 200*time.Millisecond)) // polling the nodes and the stream: nothing to await but their answers
	}
}

// round is one try: the stream's last sequence L; every node's state read
// at L (stateAt) and equal to the first node's; L read again at least
// quiet after the first read. Any other outcome is an error naming the
// seqs: the run is not settled yet, or the nodes differ at L.
func (p settleProbe) round(ctx context.Context) (settled, error) {
	t0 := time.Now()
	seq, err := p.last(ctx)
	if err != nil {
		return settled{}, fmt.Errorf("the stream's last sequence: %w", err)
	}
	var first []boardState
	var want []byte
	for i, name := range p.nodes {
		st, err := p.stateAt(ctx, i, seq)
		if err != nil {
			return settled{}, fmt.Errorf("%s: %w", name, err)
		}
		b, err := json.Marshal(st)
		if err != nil {
			return settled{}, err
		}
		if i == 0 {
			first, want = st, b
		} else if !bytes.Equal(b, want) {
			return settled{}, fmt.Errorf("%s, every node at stream seq %d: %s", name, seq, stateDiff(first, st, p.nodes[0]))
		}
	}
	sleep(ctx, p.quiet-time.Since(t0))
	again, err := p.last(ctx)
	if err != nil {
		return settled{}, fmt.Errorf("the stream's last sequence again: %w", err)
	}
	if again != seq {
		return settled{}, fmt.Errorf("the stream's last sequence moved from %d to %d within %v", seq, again, time.Since(t0).Round(time.Millisecond))
	}
	return settled{seq: seq, state: first}, nil
}

// stateAt reads node i's state where its replica's applied sequence is
// seq both before and after the read, so that the state read is seq's (a
// replica stores its applied sequence after each apply).
func (p settleProbe) stateAt(ctx context.Context, i int, seq uint64) ([]boardState, error) {
	before, err := p.applied(ctx, i)
	if err != nil {
		return nil, fmt.Errorf("applied sequence: %w", err)
	}
	if before != seq {
		return nil, fmt.Errorf("applied stream seq %d, the stream's last is %d", before, seq)
	}
	st, err := p.state(ctx, i)
	if err != nil {
		return nil, err
	}
	after, err := p.applied(ctx, i)
	if err != nil {
		return nil, fmt.Errorf("applied sequence: %w", err)
	}
	if after != seq {
		return nil, fmt.Errorf("applied stream seq %d while its state was read at %d", after, seq)
	}
	return st, nil
}

// streamLast asks the first running node that answers for the last
// sequence of Tenant's stream: JetStream's answer (the stream leader's).
func (c *Cluster) streamLast(ctx context.Context) (uint64, error) {
	err := fmt.Errorf("faults: no node running")
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		var info *jetstream.StreamInfo
		if info, err = c.streamInfo(ctx, n); err == nil {
			return info.State.LastSeq, nil
		}
	}
	return 0, err
}

// appliedMetric is the gateway's series of the stream sequence a tenant's
// replica applied (docs/OPERATIONS.md, metrics).
const appliedMetric = "rankwire_applied_sequence"

// appliedSeq reads n's applied sequence of Tenant from its /metrics.
func appliedSeq(ctx context.Context, hc *http.Client, n *Node) (uint64, error) {
	body, err := getMetrics(ctx, hc, n)
	if err != nil {
		return 0, err
	}
	defer body.Close()
	return parseApplied(body, Tenant)
}

// getMetrics GETs n's /metrics and returns its body, which the caller
// closes; an answer other than 200 is an error naming it.
func getMetrics(ctx context.Context, hc *http.Client, n *Node) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.MetricsAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: GET /metrics: %s", n.Name, resp.Status)
	}
	return resp.Body, nil
}

// parseApplied finds tenant's appliedMetric sample in a Prometheus text
// body (the value may be written as a float: 1.234567e+06).
func parseApplied(body io.Reader, tenant string) (uint64, error) {
	prefix := appliedMetric + `{tenant="` + tenant + `"} `
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), prefix)
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < 0 {
			return 0, fmt.Errorf("%s of %s: %q is no sequence", appliedMetric, tenant, v)
		}
		return uint64(f), nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s of tenant %s (not open on this node)", appliedMetric, tenant)
}
