package faults

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

func TestReport(t *testing.T) {
	var b bytes.Buffer
	Report(&b, []Result{
		{Fault: "kill9-leader", Acked: 10, WriteGap: 2 * time.Second, WatchGap: time.Second},
		{Fault: "kill9-leader", Acked: 5, Lost: 2, Twice: 1, WriteGap: 1 * time.Second, WatchGap: 3 * time.Second, Violations: []Violation{"x", "y"}},
		{Fault: "kill9-leader", Acked: 1, WriteGap: 3 * time.Second, Flaps: []Flap{
			{Node: "n2", Probes: 2, Reason: "recovering: no failure for 100ms of 1s"},
			{Node: "n3", Probes: 1, Reason: "recovering: no failure for 600ms of 1s"},
			{Node: "n3", Probes: 1, Reason: "a | b"}}},
	})
	want := "| kill9-leader | 3 | 16 | 2 / 1 | 2 | 1 | 1.00 / 2.00 / 3.00 s | 0.00 / 1.00 / 3.00 s | 0.00 / 0.00 / 0.00 s | 0.00 / 0.00 / 0.00 s |" +
		` 3 probes in 1 runs: recovering: no failure for 100ms of 1s; 1 probes in 1 runs: a \| b |`
	if !strings.Contains(b.String(), want) {
		t.Errorf("Report:\n%s\nwant a row\n%s", b.String(), want)
	}
	if strings.Contains(b.String(), "sigstop") {
		t.Errorf("Report shows a fault without runs:\n%s", b.String())
	}
}

func TestCorruptionHelpers(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "s"), 0o700)
	os.WriteFile(filepath.Join(dir, "s", "big"), bytes.Repeat([]byte{1}, 100), 0o600)
	os.WriteFile(filepath.Join(dir, "small"), []byte{1, 2}, 0o600)
	files, err := largestFiles(dir)
	if err != nil || len(files) != 2 || filepath.Base(files[0].path) != "big" {
		t.Fatalf("largestFiles = %v, %v; want big first of 2", files, err)
	}
	if err := flipByte(files[0].path, 50); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(files[0].path)
	if b[50] != 0xfe || b[49] != 1 {
		t.Errorf("flipByte: byte 50 = %#x, byte 49 = %#x; want 0xfe and 1", b[50], b[49])
	}
}

func TestFaultByName(t *testing.T) {
	for _, f := range Faults {
		if g, ok := FaultByName(f.Name); !ok || g.Name != f.Name {
			t.Errorf("FaultByName(%q) = %v, %v", f.Name, g.Name, ok)
		}
	}
	if _, ok := FaultByName("nope"); ok {
		t.Error("FaultByName(nope) found one")
	}
}

func TestCutPlans(t *testing.T) {
	tests := []struct {
		name   string
		plan   cutPlan
		pairs  string
		exempt string
	}{
		{"isolate the leader", isolateLeader, "[[1 0] [1 2]]", "[1]"},
		{"isolate a follower", isolateFollower, "[[2 0] [2 1]]", "[2]"},
		{"bridge", bridgeCut, "[[1 2]]", "[1 2]"},
	}
	for _, tt := range tests {
		pairs, exempt := tt.plan(1, 3)
		if got := fmt.Sprint(pairs); got != tt.pairs {
			t.Errorf("%s: pairs %s, want %s", tt.name, got, tt.pairs)
		}
		if got := fmt.Sprint(exempt); got != tt.exempt {
			t.Errorf("%s: exempt %s, want %s", tt.name, got, tt.exempt)
		}
	}
}

// Of the two writers each node starts with, one fails over the other way
// round: the leader's writers in partition-bridge try the cut follower
// first in one list and the node that hears both first in the other.
func TestWriterURLs(t *testing.T) {
	c := &Cluster{Nodes: []*Node{{Addr: "a"}, {Addr: "b"}, {Addr: "c"}}}
	var got []string
	for i := range 6 {
		got = append(got, strings.Join(writerURLs(c, i), " "))
	}
	want := []string{"http://a http://b http://c", "http://b http://c http://a", "http://c http://a http://b",
		"http://a http://c http://b", "http://b http://a http://c", "http://c http://b http://a"}
	if !slices.Equal(got, want) {
		t.Errorf("writers' URLs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestFreshness(t *testing.T) {
	var f freshness
	t0 := time.Unix(0, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	f.saw(5, at(0))
	f.saw(9, at(2))
	if age := f.saw(9, at(4)); age != 0 {
		t.Errorf("the newest seq is %v old, want 0", age)
	}
	if age := f.saw(5, at(7)); age != 5*time.Second {
		t.Errorf("seq 5, passed at 2 s, read at 7 s: %v old, want 5s", age)
	}
	if age := f.saw(3, at(7)); age != 7*time.Second {
		t.Errorf("seq 3, passed at 0 s, read at 7 s: %v old, want 7s", age)
	}
}

// TestReadyPollerCountsOnlyWhileCounted: a probe sent while its node was
// exempt (a restart under way) and answered 503, whose node is counted
// again before the poller tallies it (the fault's WaitReady saw 200 in
// between), is not a healthy node's flap.
func TestReadyPollerCountsOnlyWhileCounted(t *testing.T) {
	var counted atomic.Bool
	var probes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		if probes.Add(1) == 1 {
			counted.Store(true) // WaitReady's 200 lands while this probe is in flight
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	p := &readyPoller{n: &Node{Addr: strings.TrimPrefix(srv.URL, "http://")}, fresh: &freshness{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx, func(*Node) bool { return counted.Load() }) }()
	await.For(t, 10*time.Second, func() error {
		if n := probes.Load(); n < 4 {
			return fmt.Errorf("%d probes", n)
		}
		return nil
	})
	cancel()
	<-done
	if p.notReady != 0 {
		t.Errorf("a probe sent while the node was exempt counted %v not ready", p.notReady)
	}
}

// TestReadyPollerRecordsReasons: a healthy node's counted non-200 answers
// are recorded with /readyz's reason, consecutive ones of the same cause
// (figures aside) as one flap, another cause as the next.
func TestReadyPollerRecordsReasons(t *testing.T) {
	var probes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		switch n := probes.Add(1); {
		case n <= 2:
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, `{"ready":false,"reason":"recovering: no failure for %dms of 1s"}`, n*100)
		case n == 3:
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"ready":false,"reason":"cut off"}`)
		default:
			fmt.Fprint(w, `{"ready":true}`)
		}
	}))
	defer srv.Close()
	p := &readyPoller{n: &Node{Name: "n1", Addr: strings.TrimPrefix(srv.URL, "http://")}, fresh: &freshness{}, start: time.Now()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx, func(*Node) bool { return true }) }()
	await.For(t, 10*time.Second, func() error {
		if n := probes.Load(); n < 5 {
			return fmt.Errorf("%d probes", n)
		}
		return nil
	})
	cancel()
	<-done
	if len(p.flaps) != 2 || p.flaps[0].Probes != 2 || p.flaps[0].Reason != "recovering: no failure for 100ms of 1s" ||
		p.flaps[1].Probes != 1 || p.flaps[1].Reason != "cut off" || p.flaps[0].Node != "n1" {
		t.Errorf("flaps %+v, want 2 probes recovering then 1 cut off", p.flaps)
	}
}

// TestReadyPollerIgnoresItsOwnCancel: a probe in flight when the load
// stops fails with "context canceled"; that is the poller's end, not a
// healthy node's answer (the suite once counted it: 228 ms, "no answer:
// ... context canceled", at a kill9-follower run's last probe).
func TestReadyPollerIgnoresItsOwnCancel(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-r.Context().Done() // answers nothing until the poller gives up
	}))
	defer srv.Close()
	// A tick every microsecond: one is pending when the cancelled probe
	// returns, as after a slow probe in the suite, so that select may pick it.
	p := &readyPoller{n: &Node{Name: "n1", Addr: strings.TrimPrefix(srv.URL, "http://")}, fresh: &freshness{}, start: time.Now(),
		every: time.Microsecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx, func(*Node) bool { return true }) }()
	<-arrived
	cancel()
	<-done
	if p.notReady != 0 || len(p.flaps) != 0 {
		t.Errorf("a probe cancelled by the load's end counted: %v not ready, flaps %v", p.notReady, p.flaps)
	}
}
