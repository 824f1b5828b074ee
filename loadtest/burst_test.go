package loadtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/pprof"
	"strings"
	"sync"
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
