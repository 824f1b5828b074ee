package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/natstest"
)

func startNATS(t *testing.T) string {
	t.Helper()
	return natstest.Server(t).ClientURL()
}

func startHub(t *testing.T, url string) *hub.Hub {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := hub.Start(ctx, hub.Config{DataDir: t.TempDir(), NATSURL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// soon is a daily schedule whose next occurrence starts in minutes
// (UTC), within its create_ahead: due at once.
func soon(minutes int) hub.Schedule {
	at := time.Now().UTC().Add(time.Duration(minutes) * time.Minute)
	return hub.Schedule{Every: "day", At: at.Format("15:04"), Duration: "30m", CreateAhead: "1h",
		Settings: hub.Settings{Prizes: []hub.Prize{{From: 1, To: 3, Prize: "€10"}}}}
}

func streamMsgs(t *testing.T, h *hub.Hub, tenant string) uint64 {
	t.Helper()
	return natstest.StreamMsgs(t, h.JetStream(), "RW_"+tenant)
}

func boardsOf(h *hub.Hub, tenant, prefix string) []string {
	var out []string
	for _, b := range h.Boards(tenant) {
		if strings.HasPrefix(b.Name, prefix) {
			out = append(out, b.Name)
		}
	}
	return out
}

// TestTwoNodesFireOnce: two hubs on one NATS, each with its ticker: each
// tenant's due occurrence gets one board, its stream one fire event, and
// twin tenants with the same schedule name get each their own board.
func TestTwoNodesFireOnce(t *testing.T) {
	url := startNATS(t)
	a, b := startHub(t, url), startHub(t, url)
	ctx := context.Background()
	want := map[string]string{}
	for i, tenant := range []string{"t1", "t2"} {
		in, err := hub.SchedulesOf(a).Put(ctx, tenant, "cup", soon(5+10*i))
		if err != nil {
			t.Fatal(err)
		}
		if in.Next == 0 || in.LastBoard != "" {
			t.Fatalf("%s: a new schedule: %+v", tenant, in)
		}
		want[tenant] = "cup-" + time.UnixMilli(in.Next).UTC().Format("20060102-1504")
	}
	tickers := []*Ticker{Start(Config{Schedules: hub.SchedulesOf(a), Tick: 50 * time.Millisecond}),
		Start(Config{Schedules: hub.SchedulesOf(b), Tick: 50 * time.Millisecond})}
	for _, tk := range tickers {
		defer tk.Close()
	}
	for _, h := range []*hub.Hub{a, b} {
		for tenant, board := range want {
			await.For(t, 20*time.Second, func() error {
				if got := boardsOf(h, tenant, "cup-"); len(got) != 1 || got[0] != board {
					return fmt.Errorf("%s's boards: %v, want [%s]", tenant, got, board)
				}
				return nil
			})
		}
	}
	// A few more passes of both tickers: nothing more is published.
	p0, p1 := tickers[0].Passes(), tickers[1].Passes()
	await.For(t, 10*time.Second, func() error {
		if tickers[0].Passes() < p0+3 || tickers[1].Passes() < p1+3 {
			return fmt.Errorf("passes")
		}
		return nil
	})
	for tenant, board := range want {
		if n := streamMsgs(t, a, tenant); n != 2 {
			t.Errorf("%s's stream holds %d events, want the schedule and one fire", tenant, n)
		}
		in, err := hub.SchedulesOf(b).Get(tenant, "cup")
		if err != nil || in.LastBoard != board || in.LastError != "" {
			t.Errorf("%s's schedule on the other node: %+v, %v", tenant, in, err)
		}
		info, err := b.Board(tenant, board)
		if err != nil || info.Settings.StartsAt == "" || len(info.Settings.Prizes) != 1 {
			t.Errorf("%s's board: %+v, %v", tenant, info, err)
		}
	}
	if tickers[0].Failed()+tickers[1].Failed() != 0 {
		t.Errorf("failed firings: %d, %d", tickers[0].Failed(), tickers[1].Failed())
	}
	// Deleting t1's schedule keeps its board and leaves t2's schedule.
	if err := hub.SchedulesOf(a).Delete(ctx, "t1", "cup"); err != nil {
		t.Fatal(err)
	}
	if _, err := hub.SchedulesOf(a).Get("t2", "cup"); err != nil || len(boardsOf(a, "t1", "cup-")) != 1 {
		t.Fatalf("after deleting t1's schedule: t2's %v, t1's boards %v", err, boardsOf(a, "t1", "cup-"))
	}
}
