package loadtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary act as a fan-out worker process: RunFanout
// re-executes it with RWLOAD_FANOUT_WORKER=1, as rwload re-executes itself;
// and as Floor's sink, with RWLOAD_FLOOR_SINK=ADDR.
func TestMain(m *testing.M) {
	if addr := os.Getenv("RWLOAD_FLOOR_SINK"); addr != "" {
		if err := RunFloorSink(context.Background(), addr, floorTestConns); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv("RWLOAD_FANOUT_WORKER") == "1" {
		if err := RunFanoutWorker(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if gatewayDir != "" {
		os.RemoveAll(gatewayDir) // the gateway built for the tests
	}
	os.Exit(code)
}

// TestFanoutEndToEnd runs 20 subscriptions of every view kind in two
// worker processes against a real gateway for 2 s, a connection each and
// then 4 to a connection (5 connections, each with one view of every
// kind): every subscription connects, messages arrive, every kind records
// latencies, and every diff chains to the seq before it on its
// subscription.
func TestFanoutEndToEnd(t *testing.T) {
	target := gatewayTarget(t, "fan")
	tests := []struct {
		name                      string
		perConn, perWorker, conns int
	}{
		{"a connection each", 1, 10, 20},
		{"4 per connection", 4, 3, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target.Board = fmt.Sprintf("fan%d", tt.perConn)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			rep, err := RunFanout(ctx, FanoutConfig{Target: target, Subscribers: 20, PerConn: tt.perConn, Top: 1, Around: 1, Rank: 1, MembersViews: 1,
				BoardMembers: 200, Rate: 2000, Batch: 20, Writers: 4, Duration: 2 * time.Second, PerWorker: tt.perWorker,
				Drain: 300 * time.Millisecond, WorkerCommand: testWorkerCommand})
			if err != nil {
				t.Fatalf("RunFanout: %v", err)
			}
			t.Log(rep)
			if rep.Workers != 2 || rep.Subscribers != 20 || rep.Connected != 20 || len(rep.WorkerErrors) > 0 {
				t.Fatalf("workers %d, subscriptions %d, connected %d, worker errors %v", rep.Workers, rep.Subscribers, rep.Connected, rep.WorkerErrors)
			}
			if rep.Connections != tt.conns || rep.ConnectionsConnected != tt.conns || rep.PerConnection != tt.perConn {
				t.Errorf("connections %d (%d connected) of %d; want %d of %d", rep.Connections, rep.ConnectionsConnected, rep.PerConnection, tt.conns, tt.perConn)
			}
			if rep.MessagesPerSec <= 0 || rep.SubmitsPerSecond <= 0 || len(rep.WriteErrors) > 0 {
				t.Errorf("messages/s %.0f, submits/s %.0f, write errors %v", rep.MessagesPerSec, rep.SubmitsPerSecond, rep.WriteErrors)
			}
			for _, k := range viewKinds {
				if l := rep.Latency[k]; l.Count == 0 || l.P50 <= 0 || l.Max < l.P99 || l.Max > 5*time.Second {
					t.Errorf("%s latency %v", k, l)
				}
			}
			if rep.Gaps != 0 || rep.Reconnects != 0 || len(rep.Errors) > 0 || len(rep.Closes) > 0 {
				t.Errorf("gaps %d, reconnects %d, errors %v, closes %v", rep.Gaps, rep.Reconnects, rep.Errors, rep.Closes)
			}
			if rep.Viewed != 20 {
				t.Errorf("views received %d of 20", rep.Viewed)
			}
			if rep.Tick.Ticks == 0 {
				t.Error("no push ticks scraped from /metrics")
			}
			if rep.AfterAck != nil {
				t.Errorf("latency after the acknowledgement %v, with the subscribers in other processes", *rep.AfterAck)
			}
		})
	}
}

// testWorkerCommand starts this test binary as a fan-out worker (see
// TestMain).
func testWorkerCommand() *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RWLOAD_FANOUT_WORKER=1")
	return cmd
}

// TestFanoutStalled runs 10 subscribers of a top-100 and 4 connections
// that subscribe to it and never read, in two worker processes, against a
// gateway with a slow timeout of 1 s. Every write changes the top-100 (the
// board has 100 members), so a stalled socket fills within a second: the
// gateway closes all 4 (4008) during the 4 s run, and the subscribers that
// read lose nothing: no gap, no close, latencies recorded.
func TestFanoutStalled(t *testing.T) {
	target := gatewayTarget(t, "stall", "--slow-timeout", "1s")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := RunFanout(ctx, FanoutConfig{Target: target, Subscribers: 10, Stalled: 4, Top: 1, Limit: 100, BoardMembers: 100,
		Rate: 2000, Batch: 20, Writers: 4, Duration: 4 * time.Second, PerWorker: 7, Drain: 300 * time.Millisecond,
		WorkerCommand: testWorkerCommand})
	if err != nil {
		t.Fatalf("RunFanout: %v", err)
	}
	t.Log(rep)
	if rep.Workers != 2 || rep.Subscribers != 10 || rep.Connected != 10 || rep.ConnectionsConnected != 10 || len(rep.WorkerErrors) > 0 {
		t.Fatalf("workers %d, subscriptions %d, connected %d on %d, worker errors %v",
			rep.Workers, rep.Subscribers, rep.Connected, rep.ConnectionsConnected, rep.WorkerErrors)
	}
	st := rep.Stalled
	if st == nil || st.Connections != 4 || st.Connected != 4 || st.Failed != 0 {
		t.Fatalf("stalled %+v, want 4 connected", st)
	}
	if st.SlowCloses < 4 || st.ClosedAtEnd != 4 || st.OpenAtEnd != 0 {
		t.Errorf("slow closes %.0f, closed at the end %d, open %d; want ≥ 4, 4, 0", st.SlowCloses, st.ClosedAtEnd, st.OpenAtEnd)
	}
	if l := rep.Latency["top"]; l.Count == 0 || l.Max > 5*time.Second {
		t.Errorf("top latency %v", l)
	}
	if rep.Gaps != 0 || rep.Reconnects != 0 || len(rep.Errors) > 0 || len(rep.Closes) > 0 {
		t.Errorf("gaps %d, reconnects %d, errors %v, closes %v", rep.Gaps, rep.Reconnects, rep.Errors, rep.Closes)
	}
	if !strings.Contains(rep.String(), "\n  stalled: 4 connections that never read (4 connected); server slow closes ") {
		t.Errorf("no stalled line:\n%s", rep)
	}
}

// TestFanoutWorkerConfigs checks how the connections are split over
// workers: at most PerWorker each, stalled ones included, a worker's
// subscriptions starting at a connection's first, every subscription and
// every stalled connection once.
func TestFanoutWorkerConfigs(t *testing.T) {
	tests := []struct {
		name                     string
		subs, perConn, perWorker int
		stalled                  int
		want                     [][2]int // [from, to) per worker
		wantStalled              [][2]int // [stalled from, stalled to) per worker; nil: none
	}{
		{"a connection each", 20, 1, 10, 0, [][2]int{{0, 10}, {10, 20}}, nil},
		{"a connection each, uneven", 7, 1, 3, 0, [][2]int{{0, 2}, {2, 4}, {4, 7}}, nil},
		{"4 per connection", 20, 4, 3, 0, [][2]int{{0, 8}, {8, 20}}, nil},
		{"a short last connection", 10, 4, 1, 0, [][2]int{{0, 4}, {4, 8}, {8, 10}}, nil},
		{"one worker", 10, 4, 9000, 0, [][2]int{{0, 10}}, nil},
		{"100 per connection", 1000, 100, 4, 0, [][2]int{{0, 300}, {300, 600}, {600, 1000}}, nil},
		{"stalled, one worker", 10, 1, 9000, 4, [][2]int{{0, 10}}, [][2]int{{0, 4}}},
		{"stalled, two workers", 10, 1, 7, 4, [][2]int{{0, 5}, {5, 10}}, [][2]int{{0, 2}, {2, 4}}},
		{"stalled need a worker more", 10, 1, 10, 10, [][2]int{{0, 5}, {5, 10}}, [][2]int{{0, 5}, {5, 10}}},
		{"stalled, uneven", 7, 1, 3, 2, [][2]int{{0, 2}, {2, 4}, {4, 7}}, [][2]int{{0, 1}, {1, 2}, {2, 2}}},
		{"a stalled connection per worker", 2, 1, 1, 2, [][2]int{{0, 0}, {0, 1}, {1, 1}, {1, 2}}, [][2]int{{0, 1}, {1, 1}, {1, 2}, {2, 2}}},
		{"stalled, 4 per connection", 20, 4, 4, 3, [][2]int{{0, 8}, {8, 20}}, [][2]int{{0, 2}, {2, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := FanoutConfig{Target: Target{URL: "http://127.0.0.1:8080"}, Subscribers: tt.subs, PerConn: tt.perConn, PerWorker: tt.perWorker,
				Stalled: tt.stalled}.withDefaults()
			wcs, err := c.workerConfigs()
			if err != nil {
				t.Fatal(err)
			}
			var got, gotStalled [][2]int
			for _, wc := range wcs {
				got = append(got, [2]int{wc.From, wc.To})
				if tt.wantStalled != nil || wc.StalledFrom != 0 || wc.StalledTo != 0 {
					gotStalled = append(gotStalled, [2]int{wc.StalledFrom, wc.StalledTo})
				}
				if wc.PerConn != tt.perConn {
					t.Errorf("worker config per connection %d, want %d", wc.PerConn, tt.perConn)
				}
				if conns := (wc.To-wc.From+tt.perConn-1)/tt.perConn + wc.StalledTo - wc.StalledFrom; conns > tt.perWorker {
					t.Errorf("worker of %d connections, over %d", conns, tt.perWorker)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || fmt.Sprint(gotStalled) != fmt.Sprint(tt.wantStalled) {
				t.Errorf("workers %v, stalled %v; want %v, %v", got, gotStalled, tt.want, tt.wantStalled)
			}
		})
	}
}

func TestFanoutConfigCheck(t *testing.T) {
	tests := []struct {
		name string
		cfg  FanoutConfig
		want error
	}{
		{"default", FanoutConfig{}, nil},
		{"100", FanoutConfig{PerConn: 100}, nil},
		{"101", FanoutConfig{PerConn: 101}, errPerConn},
		{"negative", FanoutConfig{PerConn: -1}, errPerConn},
		{"redis, one", FanoutConfig{Redis: "127.0.0.1:6379", PerConn: 1}, nil},
		{"redis, two", FanoutConfig{Redis: "127.0.0.1:6379", PerConn: 2}, errPerConnRedis},
		{"stalled, as many as subscribers", FanoutConfig{Subscribers: 10, Stalled: 10}, nil},
		{"stalled, more than subscribers", FanoutConfig{Subscribers: 10, Stalled: 11}, errStalled},
		{"stalled, negative", FanoutConfig{Subscribers: 10, Stalled: -1}, errStalled},
		{"stalled, redis", FanoutConfig{Redis: "127.0.0.1:6379", Subscribers: 10, Stalled: 1}, errStalledRedis},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.cfg.withDefaults().check(); !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Errorf("check() = %v, want %v", err, tt.want)
			}
		})
	}
	// RunFanout refuses before it touches a server.
	if _, err := RunFanout(context.Background(), FanoutConfig{Subscribers: 10, PerConn: 101}); !errors.Is(err, errPerConn) {
		t.Errorf("RunFanout with 101 per connection: %v", err)
	}
}

// TestFanoutReportConnections checks that the table shows connections
// beside subscriptions where a connection carries several, divides the
// per-connection figures by connections, and prints a report of one
// subscription per connection (or from before per_connection) as before.
func TestFanoutReportConnections(t *testing.T) {
	r := FanoutReport{Peer: "rankwire", Subscribers: 20, Connected: 20, Workers: 2, Mix: "top:1", BoardMembers: 200,
		StackIdle: 0, StackConnected: 5 * 8192, GoroutinesConnected: 10}
	old := r.String()
	if !strings.Contains(old, "20 subscribers (20 connected in") || !strings.Contains(old, "(2.0 KiB per connection); goroutines 0 idle, 10 connected (0.5 per connection)") {
		t.Errorf("a report without per_connection:\n%s", old)
	}
	r.Connections, r.ConnectionsConnected, r.PerConnection = 20, 20, 1
	if r.String() != old {
		t.Errorf("one per connection:\n%s\nwant as before:\n%s", r.String(), old)
	}
	r.Connections, r.ConnectionsConnected, r.PerConnection = 5, 5, 4
	s := r.String()
	if !strings.Contains(s, "20 subscriptions on 5 connections of 4 (20 on 5 connected in") || !strings.Contains(s, "(8.0 KiB per connection); goroutines 0 idle, 10 connected (2.0 per connection)") {
		t.Errorf("4 per connection:\n%s", s)
	}
	// Stalled connections get a line of their own and count as
	// connections the gateway holds.
	r.Stalled = &StalledStats{Connections: 5, Connected: 5, ClosedAtEnd: 4, OpenAtEnd: 1, SlowCloses: 4}
	s = r.String()
	if !strings.Contains(s, "\n  stalled: 5 connections that never read (5 connected); server slow closes 4 (4008); at the end 4 found closed, 1 still open\n") ||
		!strings.Contains(s, "(4.0 KiB per connection); goroutines 0 idle, 10 connected (1.0 per connection)") {
		t.Errorf("5 stalled:\n%s", s)
	}
	r.Stalled.SlowCloses, r.Stalled.Failed = -1, 2
	if s = r.String(); !strings.Contains(s, "(5 connected, 2 failed to open); server slow closes n/a (4008)") {
		t.Errorf("stalled, no metrics:\n%s", s)
	}
}

func TestProbeScoreRoundTrip(t *testing.T) {
	sent := time.UnixMicro(1_795_000_123_456_789)
	tests := []struct {
		name  string
		j     int
		after time.Duration
	}{
		{"first member", 0, 40 * time.Millisecond},
		{"millionth member", 999_999, 250 * time.Millisecond},
		{"late by minutes", 42, 7 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := probeScore(tt.j, sent)
			if int(s/scoreSlot) != tt.j {
				t.Fatalf("score %f left member %d's slot", s, tt.j)
			}
			got, ok := probeSent(s, sent.Add(tt.after))
			if !ok || !got.Equal(sent) {
				t.Fatalf("probeSent = %v, %v; want %v", got, ok, sent)
			}
		})
	}
	if _, ok := probeSent(17*scoreSlot, sent); ok {
		t.Error("a preloaded score decoded as a probe")
	}
}

func TestHistPercentiles(t *testing.T) {
	h := newHist()
	for i := 1; i <= 1000; i++ {
		h.Add(time.Duration(i) * time.Millisecond)
	}
	l := h.Latency()
	near := func(got, want time.Duration) bool { return got >= want && float64(got) <= float64(want)*1.021 }
	if l.Count != 1000 || !near(l.P50, 500*time.Millisecond) || !near(l.P99, 990*time.Millisecond) || l.Max != time.Second {
		t.Fatalf("latency %v", l)
	}
	var m Hist = Hist{Counts: newHist().Counts}
	m.merge(h.wire())
	if m.Latency() != l {
		t.Errorf("merged %v, want %v", m.Latency(), l)
	}
}

func TestViewPlan(t *testing.T) {
	p := viewPlan{Top: 2, Around: 1, Rank: 1, Members: 1, Limit: 10, Radius: 5, BoardMembers: 1000}
	want := []string{"top", "top", "around", "rank", "members", "top"}
	for i, k := range want {
		v, ki := p.view(i)
		if v.Kind != k || viewKinds[ki] != k {
			t.Errorf("view(%d) = %s (%d), want %s", i, v.Kind, ki, k)
		}
	}
}
