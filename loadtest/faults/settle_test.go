package faults

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	rwclient "github.com/rankwire/rankwire/client"
)

// world is a cluster as settle sees it: the stream's last sequence at each
// read (the last value repeats), each node's applied sequence at each of
// its reads (likewise), and each node's state, a function of its applied
// sequence at the state's read (the board's seq is the applied seq, its
// one row scoring it, plus skew[i] on node i).
type world struct {
	mu      sync.Mutex
	lasts   []uint64
	applied [][]uint64
	skew    []float64
	cur     []uint64 // each node's applied sequence as last read
	rounds  int      // reads of the stream's last sequence
}

func next(s *[]uint64) uint64 {
	v := (*s)[0]
	if len(*s) > 1 {
		*s = (*s)[1:]
	}
	return v
}

func (w *world) probe() settleProbe {
	w.cur = make([]uint64, len(w.applied))
	w.skew = append(w.skew, make([]float64, len(w.applied))...)
	p := settleProbe{quiet: time.Millisecond, every: 10 * time.Millisecond}
	for i := range w.applied {
		p.nodes = append(p.nodes, fmt.Sprintf("n%d", i+1))
	}
	p.last = func(context.Context) (uint64, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.rounds++
		return next(&w.lasts), nil
	}
	p.applied = func(_ context.Context, i int) (uint64, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.cur[i] = next(&w.applied[i])
		return w.cur[i], nil
	}
	p.state = func(_ context.Context, i int) ([]boardState, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		seq := w.cur[i]
		row := rwclient.StandingRow{Row: rwclient.Row{Rank: 1, Member: "w0", Score: float64(seq) + w.skew[i]}}
		return []boardState{{Board: rwclient.Board{Name: Board}, Standings: rwclient.Standings{Seq: seq, Total: 1, Rows: []rwclient.StandingRow{row}}}}, nil
	}
	return p
}

// TestSettleWaitsForTheStreamsLastSeq: the case of the kill9-leader run.
// Every node serves the same standings at 3518 while the stream holds
// 3519 (a call cut off at the kill, committed by the new leader): equal
// is not settled; settle returns the state once every node applied 3519.
func TestSettleWaitsForTheStreamsLastSeq(t *testing.T) {
	w := &world{lasts: []uint64{3519}, applied: [][]uint64{{3518, 3518, 3519}, {3518, 3518, 3518, 3519}, {3518, 3519}}}
	set, err := settle(context.Background(), w.probe(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if set.seq != 3519 || set.state[0].Standings.Seq != 3519 {
		t.Fatalf("settled at stream seq %d, standings at %d; want 3519 both", set.seq, set.state[0].Standings.Seq)
	}
}

// TestSettleStreamMoved: a round whose stream's last sequence moved during
// the quiet time is not settled, though every node applied the first.
func TestSettleStreamMoved(t *testing.T) {
	w := &world{lasts: []uint64{7, 8}, applied: [][]uint64{{7, 7, 8}, {7, 7, 8}, {7, 7, 8}}}
	p := w.probe()
	if _, err := p.round(context.Background()); err == nil || !strings.Contains(err.Error(), "moved from 7 to 8") {
		t.Fatalf("the first round: %v, want the move from 7 to 8 named", err)
	}
	set, err := settle(context.Background(), p, 5*time.Second)
	if err != nil || set.seq != 8 || set.state[0].Standings.Seq != 8 {
		t.Fatalf("settle = seq %d, %v; want 8", set.seq, err)
	}
}

// TestSettleAppliedWhileRead: a node whose applied sequence moved while
// its state was read did not serve the stream's last sequence's state.
func TestSettleAppliedWhileRead(t *testing.T) {
	w := &world{lasts: []uint64{5}, applied: [][]uint64{{5, 6}}}
	_, err := w.probe().stateAt(context.Background(), 0, 5)
	if err == nil || !strings.Contains(err.Error(), "applied stream seq 6 while its state was read at 5") {
		t.Fatalf("stateAt: %v, want the move named", err)
	}
}

// TestSettleNodesDiffer: nodes that differ at the stream's last sequence
// are a finding after the limit, naming the node, the seq and the rank.
func TestSettleNodesDiffer(t *testing.T) {
	w := &world{lasts: []uint64{4}, applied: [][]uint64{{4}, {4}, {4}}, skew: []float64{0, 0, 1}}
	_, err := settle(context.Background(), w.probe(), 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "n3, every node at stream seq 4: board sum rank 1") {
		t.Fatalf("settle: %v, want n3's difference at stream seq 4", err)
	}
}

func TestParseApplied(t *testing.T) {
	body := `# HELP rankwire_applied_sequence Stream sequence of the last event the tenant's replica applied.
# TYPE rankwire_applied_sequence gauge
rankwire_applied_sequence{tenant="faultsx"} 9
rankwire_applied_sequence{tenant="faults"} 1.234567e+06
rankwire_apply_lag_seconds{tenant="faults"} 0.001
`
	if got, err := parseApplied(strings.NewReader(body), "faults"); err != nil || got != 1234567 {
		t.Errorf("parseApplied = %d, %v; want 1234567", got, err)
	}
	if _, err := parseApplied(strings.NewReader(body), "other"); err == nil || !strings.Contains(err.Error(), "tenant other") {
		t.Errorf("parseApplied of a tenant not open: %v, want it named", err)
	}
}

// TestAppliedSeqOverHTTP reads the applied sequence from a real /metrics
// listener, and takes an answer other than 200 for an error.
func TestAppliedSeqOverHTTP(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "# TYPE rankwire_applied_sequence gauge\nrankwire_applied_sequence{tenant=%q} 42\n", Tenant)
	}))
	defer srv.Close()
	n := &Node{Name: "n1", MetricsAddr: strings.TrimPrefix(srv.URL, "http://")}
	got, err := appliedSeq(context.Background(), srv.Client(), n)
	if err != nil || got != 42 {
		t.Fatalf("appliedSeq = %d, %v; want 42", got, err)
	}
	status = http.StatusServiceUnavailable
	if _, err := appliedSeq(context.Background(), srv.Client(), n); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("a 503 read as %v; want an error naming it", err)
	}
}
