//go:build rankwire_failpoints && unix

package failpoint

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/rankwire/rankwire/internal/ledger"
)

// The environment variables the hooks read once, at start (doc.go).
const (
	envDiverge = "RANKWIRE_FAILPOINT_DIVERGE"
	envHold    = "RANKWIRE_FAILPOINT_HOLD_REBUILD"
)

// diverge is a parsed RANKWIRE_FAILPOINT_DIVERGE.
type diverge struct {
	tenant, board, member string
	score                 float64
	seq                   uint64
}

var (
	perturb  *diverge       // nil: none asked
	badSpec  error          // RANKWIRE_FAILPOINT_DIVERGE did not parse: logged at the first apply
	fired    atomic.Bool    // the perturbation happens once
	warned   atomic.Bool    // badSpec is logged once
	holdFor  string         // the tenant whose rebuild waits for SIGUSR1; "": none
	released chan os.Signal // SIGUSR1, registered only where holdFor is set
)

func init() {
	if spec := os.Getenv(envDiverge); spec != "" {
		perturb, badSpec = parseDiverge(spec)
	}
	if holdFor = os.Getenv(envHold); holdFor != "" {
		released = make(chan os.Signal, 1)
		signal.Notify(released, syscall.SIGUSR1)
	}
}

// parseDiverge parses <tenant>/<board>/<member>=<score>@<seq>.
func parseDiverge(spec string) (*diverge, error) {
	rest, seq, ok := strings.Cut(spec, "@")
	path, score, ok2 := strings.Cut(rest, "=")
	parts := strings.Split(path, "/")
	if !ok || !ok2 || len(parts) != 3 {
		return nil, fmt.Errorf("%s=%q: want <tenant>/<board>/<member>=<score>@<seq>", envDiverge, spec)
	}
	d := &diverge{tenant: parts[0], board: parts[1], member: parts[2]}
	var err error
	if d.score, err = strconv.ParseFloat(score, 64); err != nil {
		return nil, fmt.Errorf("%s: score: %w", envDiverge, err)
	}
	if d.seq, err = strconv.ParseUint(seq, 10, 64); err != nil {
		return nil, fmt.Errorf("%s: seq: %w", envDiverge, err)
	}
	return d, nil
}

// AfterApply sets the asked member's score in st, once, where tenant's
// event at the asked sequence was just applied. The caller holds the
// write lock of st, on the replica goroutine.
func AfterApply(log *slog.Logger, tenant string, seq uint64, st *ledger.State) {
	if badSpec != nil && !warned.Swap(true) {
		log.Error("failpoint: not armed", "err", badSpec)
	}
	d := perturb
	if d == nil || d.tenant != tenant || d.seq != seq || fired.Swap(true) {
		return
	}
	ev := &ledger.Event{Kind: ledger.EvSubmit, Board: d.board, Items: []ledger.Item{{Member: d.member, Score: d.score}}}
	ev.Prepare()
	out := st.Apply(seq, ev) // the same sequence: the state changes, its position does not
	log.Warn("failpoint: this node's state of the tenant perturbed in memory", "seq", seq, "board", d.board, "member", d.member, "score", d.score, "err", out.Err)
}

// BeforeRebuild waits, where tenant is the one asked, until the process
// receives SIGUSR1 or ctx ends.
func BeforeRebuild(ctx context.Context, log *slog.Logger, tenant string) {
	if holdFor == "" || tenant != holdFor {
		return
	}
	log.Warn("failpoint: the rebuild waits for SIGUSR1")
	select {
	case <-released:
		log.Warn("failpoint: the rebuild goes on")
	case <-ctx.Done():
	}
}
