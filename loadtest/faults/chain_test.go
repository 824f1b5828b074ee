package faults

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	rwclient "github.com/rankwire/rankwire/client"
)

// states builds a synthetic sequence of yielded states: "s5" a snapshot at
// seq 5, "d5>7" a diff from 5 to 7, "S9" / "D7>9" the same as a resume's
// first state; each with one row whose score is its seq.
func states(t *testing.T, spec string) []rwclient.ViewState {
	t.Helper()
	var out []rwclient.ViewState
	for _, f := range strings.Fields(spec) {
		var st rwclient.ViewState
		kind, nums := f[0], f[1:]
		st.Resumed = kind == 'S' || kind == 'D'
		st.Snapshot = kind == 's' || kind == 'S'
		if !st.Snapshot {
			prev, seq, ok := strings.Cut(nums, ">")
			if !ok {
				t.Fatalf("bad diff %q", f)
			}
			st.Prev, nums = atou(t, prev), seq
		}
		st.Seq = atou(t, nums)
		st.Rows = []rwclient.Row{{Rank: 1, Member: "w0", Score: float64(st.Seq)}}
		out = append(out, st)
	}
	return out
}

func atou(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("bad seq %q: %v", s, err)
	}
	return n
}

// TestChainCounts: the counting on synthetic sequences. An unbroken chain,
// a resume that continues it and one answered with a snapshot pass; a
// diff whose prev is not the seq held, a first state that is a diff, a
// seq that goes back or comes twice, and a final state other than the
// standings are breaks.
func TestChainCounts(t *testing.T) {
	for _, tt := range []struct {
		name, seq string
		final     uint64 // the standings' seq: one row w0 scoring it
		diffs     int
		resumes   int
		snapshots int
		pushed    int
		breaks    int
	}{
		{"unbroken", "s1 d1>2 d2>5 d5>6", 6, 3, 0, 0, 0, 0},
		{"a resume in chain", "s1 d1>2 D2>4 d4>5", 5, 3, 1, 0, 0, 0},
		{"a resume by snapshot", "s1 d1>2 S9 d9>10", 10, 2, 0, 1, 0, 0},
		{"a pushed snapshot", "s1 d1>2 s7 d7>8", 8, 2, 0, 0, 1, 0},
		{"a diff off the chain", "s1 d1>2 d3>4", 4, 1, 0, 0, 0, 1},
		{"a resumed diff off the chain", "s1 d1>2 D3>4", 4, 1, 0, 0, 0, 1},
		{"a gap in seq without a snapshot", "s1 d1>2 d5>6 d6>7", 7, 2, 0, 0, 0, 1},
		{"the first state a diff", "d1>2 d2>3", 3, 1, 0, 0, 0, 1},
		{"a seq twice", "s1 d1>2 S2", 2, 1, 0, 0, 0, 1},
		{"a snapshot that goes back", "s1 d1>2 d2>5 S3", 3, 2, 0, 0, 0, 1},
		{"a final state short of the standings", "s1 d1>2", 3, 1, 0, 0, 0, 1},
		{"no state at all", "", 3, 0, 0, 0, 0, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := Chain{Node: "n1"}
			for _, st := range states(t, tt.seq) {
				c.see(st)
			}
			c.final(tt.final, 100+tt.final, []rwclient.Row{{Rank: 1, Member: "w0", Score: float64(tt.final)}})
			if tt.name == "a snapshot that goes back" && (len(c.Breaks) != 1 || !strings.HasPrefix(c.Breaks[0], "a resume's snapshot at seq 3 after 5")) {
				t.Fatalf("the break says %q, want how the state came", c.Breaks)
			}
			if c.Diffs != tt.diffs || c.Resumes != tt.resumes || c.Snapshots != tt.snapshots || c.Pushed != tt.pushed || len(c.Breaks) != tt.breaks {
				t.Fatalf("%s: %s %q, want %d diffs, %d resumes, %d snapshots, %d pushed, %d breaks",
					tt.seq, c, c.Breaks, tt.diffs, tt.resumes, tt.snapshots, tt.pushed, tt.breaks)
			}
		})
	}
}

// TestChainReport: the table sums the watchers over runs and counts the
// runs with a break.
func TestChainReport(t *testing.T) {
	var b bytes.Buffer
	ChainReport(&b, []Result{
		{Fault: "sigstop-leader", Chains: []Chain{{Diffs: 10, Resumes: 1}, {Diffs: 5, Snapshots: 1}}},
		{Fault: "sigstop-leader", Chains: []Chain{{Diffs: 7, Pushed: 2, Breaks: []string{"x", "y"}}, {Diffs: 1}}},
	})
	want := "| sigstop-leader | 2 | 4 | 23 | 1 | 1 | 2 | 2 | 1 |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("ChainReport:\n%s\nwant a row\n%s", b.String(), want)
	}
	if strings.Contains(b.String(), "kill9-leader") {
		t.Errorf("ChainReport shows a fault without runs:\n%s", b.String())
	}
}

// TestChainFinal: the final state's check names the seqs that differ: a
// watcher past the settled standings, one at their seq with other rows,
// one behind them with other rows; one behind them with the same top (a
// view's seq is the board's when the view last changed) passes.
func TestChainFinal(t *testing.T) {
	top := []rwclient.Row{{Rank: 1, Member: "w0", Score: 9}}
	other := []rwclient.Row{{Rank: 1, Member: "w0", Score: 8}}
	for _, tt := range []struct {
		name string
		seq  uint64
		rows []rwclient.Row
		want string // the break; empty: none
	}{
		{"past", 3519, top, "final state at seq 3519, past the settled standings' seq 3518 (every node at stream seq 120, its last)"},
		{"at the seq, other rows", 3518, other, "final state at seq 3518, the settled standings' seq too (stream seq 120), with other rows: [1 w0 8], the standings [1 w0 9]"},
		{"behind, other rows", 3517, other, "final state at seq 3517, behind the settled standings' seq 3518 (stream seq 120): [1 w0 8], the standings [1 w0 9]"},
		{"behind, the same top", 3517, top, ""},
		{"at the seq, the same top", 3518, top, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := Chain{Node: "n1"}
			c.see(rwclient.ViewState{Seq: tt.seq, Snapshot: true, Rows: tt.rows})
			c.final(3518, 120, top)
			if got := strings.Join(c.Breaks, "; "); got != tt.want {
				t.Errorf("breaks %q, want %q", got, tt.want)
			}
		})
	}
}
