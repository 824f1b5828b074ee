package faults

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	rwclient "github.com/rankwire/rankwire/client"
)

// Chain is what one watcher saw of its view's chain in a run (issue 25:
// a watcher on a paused or cut-off node resumes elsewhere with an
// unbroken chain or a snapshot). It counts the states Watch yielded by
// how they came (rwclient.ViewState's Snapshot, Prev and Resumed) and
// checks that each follows the one before: a diff's prev is the seq the
// watcher held, a seq never goes back, and the last state is the board's
// final standings. Anything else is a break, a violation.
type Chain struct {
	Node      string   // the node the watcher started on
	Diffs     int      // diffs applied on the state held, resumes' diffs included
	Resumes   int      // resumes with since that continued the chain: a diff from the seq held
	Snapshots int      // resumes answered with a snapshot that replaced the state held
	Pushed    int      // snapshots on a connection that was not resuming (a gateway's coalesced push)
	Breaks    []string // each break of the chain, and a final state other than the standings
	seq       uint64   // the seq held
	states    int      // the states seen
	rows      []rwclient.Row
}

// see counts st, the next state the watcher's Watch yielded.
func (c *Chain) see(st rwclient.ViewState) {
	switch {
	case c.states > 0 && st.Seq <= c.seq:
		c.brk("%s at seq %d after %d: a state went back or came twice", kind(st), st.Seq, c.seq)
	case st.Snapshot && st.Resumed:
		c.Snapshots++
	case st.Snapshot && c.states > 0:
		c.Pushed++
	case st.Snapshot: // the first state
	case c.states == 0:
		c.brk("the first state (seq %d) is a diff, from %d", st.Seq, st.Prev)
	case st.Prev != c.seq:
		c.brk("a diff from %d to %d on seq %d held: a gap without a snapshot", st.Prev, st.Seq, c.seq)
	default:
		c.Diffs++
		if st.Resumed {
			c.Resumes++
		}
	}
	c.seq, c.rows = st.Seq, st.Rows
	c.states++
}

// kind names how st came, for a break's text.
func kind(st rwclient.ViewState) string {
	k := fmt.Sprintf("a diff from %d", st.Prev)
	if st.Snapshot {
		k = "a snapshot"
	}
	if st.Resumed {
		k = "a resume's " + strings.TrimPrefix(k, "a ")
	}
	return k
}

// brk records a break.
func (c *Chain) brk(format string, args ...any) {
	c.Breaks = append(c.Breaks, fmt.Sprintf(format, args...))
}

// final checks the last state against the settled standings' top (rows,
// the watcher's view) at their seq want, the board's seq at stream seq
// stream, which every node applied. A view's seq is the board's when the
// view last changed (docs/PROTOCOL.md), so a watcher at a seq short of
// want may still hold the settled top; past want it saw a state no node
// holds once settled; at want its rows must be the standings' at that seq.
func (c *Chain) final(want, stream uint64, rows []rwclient.Row) {
	switch {
	case c.states == 0:
		c.brk("no state at all; the settled standings are at seq %d (stream seq %d)", want, stream)
	case c.seq > want:
		c.brk("final state at seq %d, past the settled standings' seq %d (every node at stream seq %d, its last)", c.seq, want, stream)
	case !slices.Equal(c.rows, rows) && c.seq == want:
		c.brk("final state at seq %d, the settled standings' seq too (stream seq %d), with other rows: %s, the standings %s",
			c.seq, stream, topLine(c.rows), topLine(rows))
	case !slices.Equal(c.rows, rows):
		c.brk("final state at seq %d, behind the settled standings' seq %d (stream seq %d): %s, the standings %s",
			c.seq, want, stream, topLine(c.rows), topLine(rows))
	}
}

// topLine is rows as "1 w3 812, 2 w0 809, ...".
func topLine(rows []rwclient.Row) string {
	var b strings.Builder
	for i, r := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d %s %g", r.Rank, r.Member, r.Score)
	}
	return "[" + b.String() + "]"
}

// String is the chain's counts: "n1: 812 diffs, 1 resumed in chain, 0 by
// snapshot, 0 pushed snapshots, 0 breaks".
func (c Chain) String() string {
	return fmt.Sprintf("%s: %d diffs, %d resumed in chain, %d by snapshot, %d pushed snapshots, %d breaks",
		c.Node, c.Diffs, c.Resumes, c.Snapshots, c.Pushed, len(c.Breaks))
}

// ChainDetail writes one line per watcher of r: its chain's counts.
func ChainDetail(w io.Writer, r Result) {
	for _, c := range r.Chains {
		fmt.Fprintf(w, "  watcher %s\n", c)
	}
}

// ChainReport writes a Markdown table, one row per fault in Faults' order
// with runs in results: the watchers' chains summed over runs and
// watchers, and the runs with a break.
func ChainReport(w io.Writer, results []Result) {
	fmt.Fprintln(w, "| fault | runs | watchers | diffs in chain | resumes in chain (since) | resumes by snapshot | pushed snapshots | breaks | runs with a break |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, f := range Faults {
		var runs, watchers, broken int
		var sum Chain
		for _, r := range results {
			if r.Fault != f.Name {
				continue
			}
			runs++
			breaks := len(sum.Breaks)
			for _, c := range r.Chains {
				watchers++
				sum.Diffs, sum.Resumes, sum.Snapshots, sum.Pushed = sum.Diffs+c.Diffs, sum.Resumes+c.Resumes, sum.Snapshots+c.Snapshots, sum.Pushed+c.Pushed
				sum.Breaks = append(sum.Breaks, c.Breaks...)
			}
			if len(sum.Breaks) > breaks {
				broken++
			}
		}
		if runs > 0 {
			fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %d | %d |\n", f.Name, runs, watchers,
				sum.Diffs, sum.Resumes, sum.Snapshots, sum.Pushed, len(sum.Breaks), broken)
		}
	}
}

// watchTop is the rows of the watchers' view, the board's top.
const watchTop = 10

// watchCatchUp bounds how long finishWatchers waits for a watcher to show
// the settled standings: a watcher that was between gateways when the load
// stopped waits out its backoff (at most 1 s) and its read timeout (2 s).
const watchCatchUp = 10 * time.Second

// finishWatchers ends the watchers after the load stopped (StopLoad) and
// the run settled (settle): it waits up to watchCatchUp for every watcher
// to show the settled standings' top, stops them (Stop), and adds their
// chains to res, each break a violation. Where the run did not settle
// (settleErr; check says so) the chains are added without their final
// state.
func (l *Load) finishWatchers(ctx context.Context, res *Result, set settled, settleErr error) {
	seq, rows, err := boardTop(set)
	if settleErr == nil && err == nil {
		deadline := time.Now().Add(watchCatchUp)
		for _, w := range l.watchers {
			w.await(ctx, rows, deadline)
		}
	} else if settleErr == nil {
		res.Violations = append(res.Violations, Violation(err.Error()))
	}
	l.Stop()
	for _, w := range l.watchers {
		if settleErr == nil && err == nil {
			w.chain.final(seq, set.seq, rows)
		}
		res.Chains = append(res.Chains, w.chain)
		for _, b := range w.chain.Breaks {
			res.Violations = append(res.Violations, Violation(fmt.Sprintf("watcher from %s: %s", w.node, b)))
		}
	}
}

// boardTop returns the suite's board's seq and top watchTop rows in the
// settled state.
func boardTop(set settled) (uint64, []rwclient.Row, error) {
	for _, b := range set.state {
		if b.Board.Name != Board {
			continue
		}
		var rows []rwclient.Row
		for _, r := range b.Standings.Rows[:min(watchTop, len(b.Standings.Rows))] {
			rows = append(rows, r.Row)
		}
		return b.Standings.Seq, rows, nil
	}
	return 0, nil, fmt.Errorf("faults: no board %q once settled", Board)
}

// await waits until w's state has rows, or deadline or ctx passes.
func (w *watcher) await(ctx context.Context, rows []rwclient.Row, deadline time.Time) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		w.mu.Lock()
		done, moved := slices.Equal(w.chain.rows, rows), w.moved
		w.mu.Unlock()
		if done {
			return
		}
		select {
		case <-moved:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}
