package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/rankwire/rankwire/internal/await"
)

// TestPausedNodeNeverSaysNotFound pauses (SIGSTOP) a node of a 3-node
// cluster that is neither the writer nor the stream's leader, creates a
// board through node 1 meanwhile (the two others acknowledge it), sends the
// paused node a read, an SSE stream and a WebSocket subscription of that
// board, and resumes it: none may answer not_found (the issue 24 run's 793
// `board ... does not exist` from a node behind): 200 or a snapshot once the
// node caught up, or unavailable where it could not within its bound; then
// the node serves the board. Before internal/catchup the resumed node
// answered all three 404 / not_found whenever its replica had not applied
// the board by the time it handled them: a race, lost in 2 of 3 runs here
// (the node served the board 1.2-1.7 s after SIGCONT; in the third, 93 ms).
// internal/catchup's own test holds a replica behind deterministically.
//
// About 15 s; -short skips it.
func TestPausedNodeNeverSaysNotFound(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes")
	}
	c := startCluster(t, 3)
	tok := c.tok
	if status, err := call("PUT", c.nodes[0].p.url("/v1/boards/b"), tok, `{"policy":"best"}`, nil); status != 200 {
		t.Fatalf("create board b through node 1: %d %v", status, err)
	}
	victim := c.nodes[2]
	if c.streamLeader(t, "RW_t1") == 2 {
		victim = c.nodes[1] // pausing the leader would hold the create for an election
	}
	await.For(t, 30*time.Second, func() error { return readsBoard(victim, tok, "b") })

	got := make(chan lateAnswer, 3)
	pauseFor(t, victim, 3*time.Second, func(time.Time) {
		if status, err := call("PUT", c.nodes[0].p.url("/v1/boards/late"), tok, `{"policy":"best"}`, nil); status != 200 {
			t.Fatalf("create board late through node 1 while a node is paused: %d %v", status, err)
		}
		// Sent now, answered once the node runs again.
		go func() { got <- httpAnswer("GET top", victim.p.url("/v1/boards/late/top"), tok) }()
		go func() { got <- httpAnswer("GET /v1/stream", victim.p.url("/v1/stream?kind=top&board=late"), tok) }()
		go func() { got <- wsAnswer(victim.p.addr, tok, "late") }()
	})
	resumed := time.Now()
	for range 3 {
		a := <-got
		t.Logf("%s on the resumed node: %s", a.what, a.answer)
		if strings.Contains(a.answer, "not_found") || strings.HasPrefix(a.answer, "404") {
			t.Errorf("%s on a node behind answered %s: it had not applied the board yet", a.what, a.answer)
		}
	}
	await.For(t, 30*time.Second, func() error { return readsBoard(victim, tok, "late") })
	t.Logf("the resumed node serves the board %v after SIGCONT", time.Since(resumed).Round(time.Millisecond))
}

// lateAnswer is what one request of the test was answered: a status or a
// message type, with an error's code.
type lateAnswer struct{ what, answer string }

// readsBoard is nil once n answers 200 to a read of board.
func readsBoard(n *clusterNode, tok, board string) error {
	if status, err := call("GET", n.p.url("/v1/boards/"+board+"/top"), tok, "", nil); status != 200 {
		return fmt.Errorf("GET %s: %d %v", board, status, err)
	}
	return nil
}

// httpAnswer sends a GET with tok, bounded by 30 s, and returns its status
// with the error code of a refusal.
func httpAnswer(what, url, tok string) lateAnswer {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return lateAnswer{what, err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return lateAnswer{what, err.Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode == 200 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		line, _ := bufio.NewReader(resp.Body).ReadString('\n') // the first event's name
		return lateAnswer{what, "200 " + strings.TrimSpace(line)}
	}
	b, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	return lateAnswer{what, fmt.Sprintf("%d %s", resp.StatusCode, e.Error.Code)}
}

// wsAnswer subscribes to a top view of board over a WebSocket to addr and
// returns the first message of the subscription: a snapshot, or an error
// with its code. Bounded by 30 s.
func wsAnswer(addr, tok, board string) lateAnswer {
	const what = "WebSocket subscribe"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/v1/ws?access_token="+tok, nil)
	if err != nil {
		return lateAnswer{what, err.Error()}
	}
	defer ws.CloseNow()
	sub := map[string]any{"type": "subscribe", "id": "s1", "board": board, "view": map[string]any{"kind": "top"}}
	if err := wsjson.Write(ctx, ws, sub); err != nil {
		return lateAnswer{what, err.Error()}
	}
	for {
		var m struct{ Type, Code string }
		if err := wsjson.Read(ctx, ws, &m); err != nil {
			return lateAnswer{what, err.Error()}
		}
		if m.Type == "snapshot" || m.Type == "error" {
			return lateAnswer{what, strings.TrimSpace(m.Type + " " + m.Code)}
		}
	}
}
