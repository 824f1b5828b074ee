package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// demoRun is one in-process start of the gateway in demo mode.
type demoRun struct {
	token, url string // the printed read token and the board's top URL
	stop       func()
}

// startDemoRun starts the gateway with no key file on dir and returns the
// read token and top URL that it prints.
func startDemoRun(t *testing.T, dir string) demoRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out strings.Builder
	ready, errc := make(chan string, 1), make(chan error, 1)
	cfg := Config{Addr: "127.0.0.1:0", DataDir: dir, PushInterval: 100 * time.Millisecond}
	go func() { errc <- run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), &out, ready) }()
	select {
	case <-ready:
	case err := <-errc:
		t.Fatal(err)
	}
	m := regexp.MustCompile(`curl -s -H "Authorization: Bearer (\S+)" "(\S+)/top\?`).FindStringSubmatch(out.String())
	if m == nil {
		cancel()
		t.Fatalf("no curl line in:\n%s", out.String())
	}
	stop := func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
	return demoRun{token: m[1], url: m[2] + "/top", stop: stop}
}

// boardState reads the whole demo board: its seq and every row's member
// and score, in rank order.
func (d demoRun) boardState(t *testing.T) (uint64, []string) {
	t.Helper()
	var rows []string
	var seq uint64
	for offset := 0; offset < demoPlayers; offset += 1000 {
		var page struct {
			Seq  uint64 `json:"seq"`
			Rows []struct {
				Member string  `json:"member"`
				Score  float64 `json:"score"`
			} `json:"rows"`
		}
		url := fmt.Sprintf("%s?limit=1000&offset=%d", d.url, offset)
		if status, err := call("GET", url, d.token, "", &page); status != 200 || err != nil {
			t.Fatalf("GET %s: %d %v", url, status, err)
		}
		if offset == 0 {
			seq = page.Seq
		}
		for _, r := range page.Rows {
			rows = append(rows, fmt.Sprintf("%s=%g", r.Member, r.Score))
		}
	}
	return seq, rows
}

// TestDemoMovesAfterEveryStart: the simulation keeps changing the board
// after each restart on the same data. With a fixed luck seed, every start
// after the first replayed the previous run's sessions, which policy best
// keeps as they were: a start changed nothing until it outlived the run
// before it. So each run lasts runFor, and the next must change the board
// well within that.
func TestDemoMovesAfterEveryStart(t *testing.T) {
	const runFor, changeWithin = 4 * time.Second, 2500 * time.Millisecond
	dir := t.TempDir()
	for start := 1; start <= 3; start++ {
		d := startDemoRun(t, dir)
		began := time.Now()
		seq0, rows0 := d.boardState(t)
		await.For(t, changeWithin, func() error {
			seq, rows := d.boardState(t)
			if seq == seq0 || strings.Join(rows, ",") == strings.Join(rows0, ",") {
				return fmt.Errorf("start %d: board still at seq %d with the same rows", start, seq0)
			}
			return nil
		})
		time.Sleep(time.Until(began.Add(runFor))) // the run's length is what is tested, not a wait for a condition
		d.stop()
	}
}
