package faults

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	rwclient "github.com/rankwire/rankwire/client"
)

// Violation is a broken invariant the checker found.
type Violation string

// boardState is one board as a node serves it: its settings and its
// standings, every rank.
type boardState struct {
	Board     rwclient.Board     `json:"board"`
	Standings rwclient.Standings `json:"standings"`
}

// standingsPage is how many standings rows one request reads (the
// protocol's most).
const standingsPage = 1000

// readState reads node n alone (no failover): every board the tenant's
// token lists, with its settings and full standings, in the boards' order.
func readState(ctx context.Context, c *Cluster, n *Node) ([]boardState, error) {
	cl, err := rwclient.New([]string{n.URL()}, rwclient.WithToken(c.Token))
	if err != nil {
		return nil, err
	}
	var out []boardState
	for after := ""; ; {
		boards, next, err := cl.Boards(ctx, after, 100)
		if err != nil {
			return nil, fmt.Errorf("boards: %w", err)
		}
		for _, b := range boards {
			st, err := readStandings(ctx, cl, b.Name)
			if err != nil {
				return nil, fmt.Errorf("board %s: %w", b.Name, err)
			}
			out = append(out, boardState{b, st})
		}
		if next == "" {
			return out, nil
		}
		after = next
	}
}

// readStandings reads every rank of board's standings, a page at a time;
// the pages must share one seq (no write came between them).
func readStandings(ctx context.Context, cl *rwclient.Client, board string) (rwclient.Standings, error) {
	all, err := cl.Standings(ctx, board, 0, standingsPage)
	for err == nil && len(all.Rows) < all.Total {
		var pg rwclient.Standings
		if pg, err = cl.Standings(ctx, board, len(all.Rows), standingsPage); err == nil {
			if pg.Seq != all.Seq || len(pg.Rows) == 0 {
				return all, fmt.Errorf("standings moved from seq %d to %d while read (%d rows)", all.Seq, pg.Seq, len(pg.Rows))
			}
			all.Rows = append(all.Rows, pg.Rows...)
		}
	}
	return all, err
}

// stateDiff names the first difference between want (node ref's) and got.
func stateDiff(want, got []boardState, ref string) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d boards, %s %d", len(got), ref, len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		switch {
		case w.Board.Name != g.Board.Name:
			return fmt.Sprintf("board %q where %s has %q", g.Board.Name, ref, w.Board.Name)
		case g.Standings.Seq != w.Standings.Seq:
			return fmt.Sprintf("board %s at seq %d, %s at seq %d", g.Board.Name, g.Standings.Seq, ref, w.Standings.Seq)
		}
		for k := range min(len(w.Standings.Rows), len(g.Standings.Rows)) {
			if wr, gr := w.Standings.Rows[k], g.Standings.Rows[k]; wr != gr {
				return fmt.Sprintf("board %s rank %d: %+v, %s %+v", g.Board.Name, k+1, gr, ref, wr)
			}
		}
	}
	return "boards' settings or standings differ from " + ref + "'s"
}

// fingerprintOf is the SHA-256 of the settled state's encoding, shortened:
// the report shows that every node served these bytes.
func fingerprintOf(st []boardState) string {
	b, _ := json.Marshal(st)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

func rowsOf(st []boardState) int {
	n := 0
	for _, b := range st {
		n += len(b.Standings.Rows)
	}
	return n
}

// check verifies the settled state (settle: every node at the stream's
// last sequence, serving the same boards and full standings) against the
// writers' records: every writer's member counts between its acknowledged
// submissions and those plus its unresolved calls (fewer: an acknowledged
// one lost; more: one applied twice). Where the run did not settle
// (settleErr) that is the violation. It adds the violations and the
// submissions lost and applied twice to res.
func check(l *Load, res *Result, set settled, settleErr error) {
	if settleErr != nil {
		res.Violations = append(res.Violations, Violation(settleErr.Error()))
		return
	}
	st := set.state
	res.Agreed = fmt.Sprintf("%d boards, %d rows, sha256 %s at stream seq %d (settled in %v)",
		len(st), rowsOf(st), fingerprintOf(st), set.seq, set.took.Round(10*time.Millisecond))
	scores := map[string]float64{}
	for _, b := range st {
		if b.Board.Name != Board {
			continue
		}
		for _, r := range b.Standings.Rows {
			scores[r.Member] = r.Score
		}
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
