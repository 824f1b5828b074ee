package loadtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// TestBurstPlanFollowsTheGateways: the burst floor's connections go to
// the writer of the gateway each top-N watcher's connection dials, so
// that with four view kinds over six gateways only the three that hold
// top-N watchers get a writer, each worker as many as it holds.
func TestBurstPlanFollowsTheGateways(t *testing.T) {
	cfg := FanoutConfig{Subscribers: 1200, Top: 1, Around: 1, Rank: 1, MembersViews: 1, PerWorker: 500}.withDefaults()
	wcs := []workerConfig{{From: 0, To: 400}, {From: 400, To: 800}, {From: 800, To: 1200}}
	perWorker, writers := burstPlan(wcs, cfg.plan(), 1, 6)
	if want := []int{0, 2, 4}; len(writers) != 3 || writers[0] != want[0] || writers[1] != want[1] || writers[2] != want[2] {
		t.Fatalf("writers %v, want gateways %v (top watchers are every 4th connection, gateways taken in turn)", writers, want)
	}
	total := 0
	for w, per := range perWorker {
		n := 0
		for g, k := range per {
			if g%2 == 1 && k > 0 {
				t.Errorf("worker %d: %d connections to gateway %d, which holds no top watcher", w, k, g)
			}
			n += k
		}
		if n != 100 {
			t.Errorf("worker %d: %d burst connections, want its 100 top watchers", w, n)
		}
		total += n
	}
	if total != 300 {
		t.Errorf("%d burst connections, want 300", total)
	}
}

// TestBurstWriterToReaders runs a writer worker and a reader over
// loopback: every connection gets its frame, and the latency is recorded.
func TestBurstWriterToReaders(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runBurstWriter(ctx, workerConfig{BurstConns: []int{50}, BurstSize: 160, ReportEvery: 10 * time.Millisecond},
			bufio.NewReader(inR), json.NewEncoder(outW))
		outW.Close()
	}()
	reports := make(chan workerReport, 100)
	go func() {
		dec := json.NewDecoder(outR)
		for {
			var r workerReport
			if dec.Decode(&r) != nil {
				close(reports)
				return
			}
			reports <- r
		}
	}()
	// next is the writer's next report; a writer that ended (reports
	// closed) or went silent fails the test rather than spinning on
	// zero reports until ctx ends.
	next := func(want string) workerReport {
		t.Helper()
		select {
		case r, ok := <-reports:
			if !ok {
				t.Fatalf("the writer ended before %s", want)
			}
			return r
		case <-ctx.Done():
			t.Fatalf("%s: not within the test's 30 s", want)
		}
		return workerReport{}
	}
	r := next("its first report")
	if r.BurstAddr == "" {
		t.Fatal("the writer's first report has no address")
	}
	stats := newWSStats()
	var wg sync.WaitGroup
	rctx, rcancel := context.WithCancel(ctx)
	runBurstReaders(rctx, workerConfig{BurstAddrs: []string{r.BurstAddr}, BurstConns: []int{50}, BurstSize: 160}, stats, &wg)
	for r.BurstAccepted < 50 {
		r = next("it accepted 50 connections")
	}
	inW.Write([]byte("go\n"))
	for r.BurstWrite == 0 {
		r = next("a burst reported")
	}
	await.For(t, 10*time.Second, func() error {
		if n := stats.burst.Latency().Count; n < 50 {
			return fmt.Errorf("%d of 50 frames received", n)
		}
		return nil
	})
	rcancel()
	wg.Wait()
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if l := stats.burst.Latency(); l.Count != 50 || l.Max <= 0 {
		t.Errorf("burst latency %+v, want 50 frames", l)
	}
}

// TestBurstWriterLeavesNothing: a writer whose context ended leaves no
// goroutine behind once its input ends, even where a line came after it
// returned, and closes every connection it accepted.
func TestBurstWriterLeavesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runBurstWriter(ctx, workerConfig{BurstConns: []int{1}, ReportEvery: 10 * time.Millisecond},
			bufio.NewReader(inR), json.NewEncoder(outW))
		outW.Close()
	}()
	dec := json.NewDecoder(outR)
	var r workerReport
	if err := dec.Decode(&r); err != nil || r.BurstAddr == "" {
		t.Fatalf("first report %+v: %v", r, err)
	}
	c, err := net.Dial("tcp", r.BurstAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for r.BurstAccepted < 1 {
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
	}
	go io.Copy(io.Discard, outR) // the reports until the end
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	inW.Write([]byte("go\n")) // taken by its reader of in, after the loop returned
	inW.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the accepted connection: read %v, want EOF (closed by the writer)", err)
	}
	await.For(t, 10*time.Second, func() error {
		var b strings.Builder
		pprof.Lookup("goroutine").WriteTo(&b, 2)
		if strings.Contains(b.String(), "loadtest.runBurstWriter") {
			return errors.New("a goroutine of the writer is still running")
		}
		return nil
	})
}

// TestBurstWriterReportsAllAccepted: a writer reports as soon as it has
// accepted every connection it was told of, not at its next periodic
// report (an hour away here): the coordinator fires on that report.
func TestBurstWriterReportsAllAccepted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runBurstWriter(ctx, workerConfig{BurstConns: []int{2, 3}, ReportEvery: time.Hour}, bufio.NewReader(inR), json.NewEncoder(outW))
		outW.Close()
	}()
	reports := make(chan workerReport, 10)
	go func() {
		defer close(reports)
		dec := json.NewDecoder(outR)
		for {
			var r workerReport
			if dec.Decode(&r) != nil {
				return
			}
			reports <- r
		}
	}()
	r := <-reports
	for range 5 {
		c, err := net.Dial("tcp", r.BurstAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	select {
	case r = <-reports:
		if r.BurstAccepted != 5 || r.Final {
			t.Fatalf("report %+v, want 5 accepted, not final", r)
		}
	case <-ctx.Done():
		t.Fatal("no report within 10 s of the 5 connections: the writer waits for its periodic one")
	}
	cancel()
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for range reports { // the final one
	}
}

// TestFireWaitsForEveryConnection: fire tells the writers to write only
// once their reports count every socket accepted, and at once when the
// report that completes the count comes (woken by it, well within its
// 10 s bound).
func TestFireWaitsForEveryConnection(t *testing.T) {
	repR, repW := io.Pipe()
	goR, goW := io.Pipe()
	p := &workerPool{updated: make(chan struct{}, 1)}
	w := &worker{stdin: goW, updated: p.updated, final: make(chan workerReport, 1)}
	p.workers = []*worker{w}
	go w.read(repR) // ends at repW's close
	defer repW.Close()
	bf := &burstFloor{pool: p, sockets: 3}
	enc := json.NewEncoder(repW)
	if err := enc.Encode(workerReport{BurstAddr: "127.0.0.1:1", BurstAccepted: 1}); err != nil {
		t.Fatal(err)
	}
	await.For(t, 10*time.Second, func() error {
		if n := w.latest().BurstAccepted; n != 1 {
			return fmt.Errorf("%d accepted seen, want 1", n)
		}
		return nil
	})
	fired := make(chan time.Time, 1)
	go func() { bf.fire(context.Background()); fired <- time.Now() }()
	word := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(goR).ReadString('\n')
		word <- line
	}()
	select {
	case <-fired:
		t.Fatal("fired with 1 of 3 sockets accepted")
	case <-time.After(100 * time.Millisecond): // a bound on a negative: fire would have returned by now
	}
	sent := time.Now()
	if err := enc.Encode(workerReport{BurstAddr: "127.0.0.1:1", BurstAccepted: 3}); err != nil {
		t.Fatal(err)
	}
	at := <-fired
	if took := at.Sub(sent); took > 5*time.Second {
		t.Fatalf("fired %v after the report completing the count, want at once (not at its 10 s bound)", took)
	}
	if line := <-word; line != "go\n" || bf.fired.Load() != 1 {
		t.Fatalf("the writer was told %q, fired %d; want \"go\\n\" once", line, bf.fired.Load())
	}
}

// TestTopFirstFromTheMergedTopView: the top view's least latency comes
// from final's one merge of the workers' top histograms: the least over
// all workers, other views not counted, each sample counted once.
func TestTopFirstFromTheMergedTopView(t *testing.T) {
	hists := func(top, around time.Duration) []histWire {
		ht, ha := newHist(), newHist()
		ht.Add(top)
		ha.Add(around)
		return []histWire{ht.wire(), ha.wire()}
	}
	var rep FanoutReport
	rep.final([]workerReport{{Final: true, Hists: hists(30*time.Millisecond, time.Millisecond)}, {Final: true, Hists: hists(10*time.Millisecond, time.Millisecond)}})
	if got := rep.topFirst; got < 9800*time.Microsecond || got > 10*time.Millisecond {
		t.Errorf("topFirst %v, want 10ms to the histogram's 2 %% (the around view's 1ms not counted)", got)
	}
	if n := rep.Latency["top"].Count; n != 2 {
		t.Errorf("top view: %d samples, want 2", n)
	}
}

// TestBurstWritersInTheirOwnProcess: with the subscribers in this process
// (no WorkerCommand) and a BurstWriterCommand, the burst floor's writer
// starts as a process, as the gateway is one, and reports its address.
func TestBurstWritersInTheirOwnProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var started atomic.Int32
	cfg := FanoutConfig{Subscribers: 20, Top: 1, BurstFloorSize: 160, BurstWriterCommand: func() *exec.Cmd {
		started.Add(1)
		return testWorkerCommand()
	}}.withDefaults()
	wcs := []workerConfig{{From: 0, To: 20}}
	bf, err := startBurstFloor(ctx, cfg, wcs, 1)
	if err != nil {
		t.Fatalf("startBurstFloor: %v", err)
	}
	defer bf.pool.stop()
	if n := started.Load(); n != 1 {
		t.Errorf("%d writer processes started, want 1", n)
	}
	if len(wcs[0].BurstAddrs) != 1 || wcs[0].BurstAddrs[0] == "" || wcs[0].BurstConns[0] != 20 {
		t.Errorf("worker's burst plan %v %v, want one writer's address and its 20 connections", wcs[0].BurstAddrs, wcs[0].BurstConns)
	}
}
