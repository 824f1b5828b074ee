package loadtest

import (
	"context"
	"os"
	"os/exec"
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
	os.Exit(m.Run())
}

// TestFanoutEndToEnd runs 20 subscribers of every view kind in two worker
// processes against a real gateway for 2 s: every subscriber connects,
// messages arrive, every kind records latencies, and every diff chains to
// the seq before it.
func TestFanoutEndToEnd(t *testing.T) {
	target := gatewayTarget(t, "fan")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := RunFanout(ctx, FanoutConfig{Target: target, Subscribers: 20, Top: 1, Around: 1, Rank: 1, MembersViews: 1,
		BoardMembers: 200, Rate: 2000, Batch: 20, Writers: 4, Duration: 2 * time.Second, PerWorker: 10,
		Drain: 300 * time.Millisecond, WorkerCommand: func() *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "RWLOAD_FANOUT_WORKER=1")
			return cmd
		}})
	if err != nil {
		t.Fatalf("RunFanout: %v", err)
	}
	t.Log(rep)
	if rep.Workers != 2 || rep.Connected != 20 || len(rep.WorkerErrors) > 0 {
		t.Fatalf("workers %d, connected %d, worker errors %v", rep.Workers, rep.Connected, rep.WorkerErrors)
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
	if rep.Tick.Ticks == 0 {
		t.Error("no push ticks scraped from /metrics")
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
