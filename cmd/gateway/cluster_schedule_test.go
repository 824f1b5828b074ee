package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/natstest"
	"github.com/rankwire/rankwire/wire"
)

// dueSchedule is a daily schedule (UTC) whose next occurrence starts in
// minutes, within its create_ahead: its board is due at once, through the
// public API and the real clock, with no test-only way to drive time.
func dueSchedule(minutes int) string {
	at := time.Now().UTC().Add(time.Duration(minutes) * time.Minute).Format("15:04")
	return fmt.Sprintf(`{"every":"day","at":%q,"duration":"30m","create_ahead":"1h","settings":{"prizes":[{"from":1,"to":3,"prize":"€10"}]}}`, at)
}

// firstBoard names the board of a new schedule's first occurrence, as
// the schedule's answer s says: its next board, or its last where the
// occurrence already fired (one due within create_ahead fires at once, and
// an answer read after that fire was applied names the following day as
// next).
func firstBoard(s wire.Schedule) string {
	if s.LastBoard != "" {
		return s.LastBoard
	}
	return s.NextBoard
}

// scheduledBoards returns the boards of n whose names start with prefix.
func scheduledBoards(n *clusterNode, tok, prefix string) ([]string, error) {
	var list wire.BoardList
	if status, err := call("GET", n.p.url("/v1/boards?limit=100"), tok, "", &list); status != 200 || err != nil {
		return nil, fmt.Errorf("GET /v1/boards: %d %v", status, err)
	}
	var out []string
	for _, b := range list.Boards {
		if strings.HasPrefix(b.Name, prefix) {
			out = append(out, b.Name)
		}
	}
	return out, nil
}

// everyNodeHasOne waits until every node lists exactly board among the
// boards named prefix.
func everyNodeHasOne(t *testing.T, nodes []*clusterNode, tok, prefix, board string) {
	t.Helper()
	for i, n := range nodes {
		await.For(t, 30*time.Second, func() error {
			got, err := scheduledBoards(n, tok, prefix)
			if err != nil || len(got) != 1 || got[0] != board {
				return fmt.Errorf("node %d: boards %v (%v), want [%s]", i+1, got, err, board)
			}
			return nil
		})
	}
}

// streamMsgs returns the events tenant t1's stream holds.
func (c *cluster) streamMsgs(t *testing.T) uint64 {
	t.Helper()
	js, done := c.jetStream(t, c.nodes[0])
	defer done()
	return natstest.StreamMsgs(t, js, "RW_t1")
}

// putSchedule puts a schedule through url until it is there, within 30 s:
// a node just started, or back, may answer 503 while its stream elects a
// leader. A PUT answered with an error may still have been applied, so it
// looks before putting again, and the stream holds one put.
func putSchedule(t *testing.T, url, tok, body string) wire.Schedule {
	t.Helper()
	var sched wire.Schedule
	await.For(t, 30*time.Second, func() error {
		if status, err := call("GET", url, tok, "", &sched); status == 200 && err == nil {
			return nil
		}
		if status, err := call("PUT", url, tok, body, &sched); status != 200 || err != nil {
			return fmt.Errorf("PUT schedule: %d %v", status, err)
		}
		return nil
	})
	return sched
}

// TestClusterScheduleFiresOnce: a daily schedule put on one node of three
// gets exactly one board for its occurrence, the same on every node, and
// one fire event in the stream although every node's ticker publishes it;
// after every node restarts (from its snapshot) nothing fires again, and a
// second schedule put then fires once too.
func TestClusterScheduleFiresOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-node cluster")
	}
	c := startCluster(t, 3)
	tok := c.tok
	sched := putSchedule(t, c.nodes[0].p.url("/v1/schedules/nightly"), tok, dueSchedule(5))
	first := firstBoard(sched)
	if !strings.HasPrefix(first, "nightly-") {
		t.Fatalf("schedule: %+v", sched)
	}
	everyNodeHasOne(t, c.nodes, tok, "nightly-", first)
	for i, n := range c.nodes {
		var got wire.Schedule
		if status, err := call("GET", n.p.url("/v1/schedules/nightly"), tok, "", &got); status != 200 || err != nil ||
			got.LastBoard != first || got.LastError != "" {
			t.Fatalf("node %d: schedule %+v (%d %v)", i+1, got, status, err)
		}
	}

	stopAllWithin(t, c.nodes, 20*time.Second) // every node down, its snapshot written
	addrs := make([]chan string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.launch(t)
	}
	for i, n := range c.nodes {
		n.wait(t, addrs[i])
	}
	// A second schedule fires once its node's ticker passes; every
	// ticker's pass looks at both schedules.
	sched = putSchedule(t, c.nodes[1].p.url("/v1/schedules/second"), tok, dueSchedule(10))
	everyNodeHasOne(t, c.nodes, tok, "second-", firstBoard(sched))
	everyNodeHasOne(t, c.nodes, tok, "nightly-", first)
	if got := c.streamMsgs(t); got != 4 {
		t.Fatalf("t1's stream holds %d events, want 4: two schedules, one fire each", got)
	}
}
