package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	rwclient "github.com/rankwire/rankwire/client"
)

// benchDiff is a gateway diff message as subscriptions/encode.go writes
// it: the fields in the same order, every row with rank and subscore.
type benchDiff struct {
	Type  string     `json:"type"`
	ID    string     `json:"id"`
	Seq   uint64     `json:"seq"`
	Prev  *uint64    `json:"prev,omitempty"`
	Total int        `json:"total"`
	Rows  []benchRow `json:"rows"`
	Gone  []int      `json:"gone,omitempty"`
}

type benchRow struct {
	Rank     int     `json:"rank"`
	Member   string  `json:"member"`
	Score    float64 `json:"score"`
	Subscore float64 `json:"subscore"`
}

// topDiff is the k-th diff of a top-10 view on a board of 100,000 slot
// members (see scoreSlot): seq k+2 after prev k+1, every row rewritten by
// a probe sent at sent, so that every row is a submission not seen before.
func topDiff(k int, sent time.Time) []byte {
	const n = 100_000
	prev := uint64(k + 1)
	m := benchDiff{Type: "diff", ID: "v", Seq: prev + 1, Prev: &prev, Total: n}
	for r := range 10 {
		j := n - 1 - r
		m.Rows = append(m.Rows, benchRow{Rank: r + 1, Member: fmt.Sprintf("m%d", j), Score: probeScore(j, sent)})
	}
	b, _ := json.Marshal(m) // cannot fail
	return b
}

// BenchmarkSubscriberHandle is the subscriber's cost per message once it
// has the message's bytes: a 10-row top-10 diff whose rows are all new
// probes, so that every row adds a latency sample. "parallel" runs a
// subscriber per goroutine on one shared wsStats, as a worker does (run it
// with -cpu 2 or more).
func BenchmarkSubscriberHandle(b *testing.B) {
	joined := time.UnixMicro(1_795_000_000_000_000)
	const k = 64 // distinct messages, cycled; seq restarts at each cycle
	msgs := make([][]byte, k)
	recvs := make([]time.Time, k)
	for i := range msgs {
		sent := joined.Add(time.Duration(i+1) * time.Millisecond)
		msgs[i], recvs[i] = topDiff(i, sent), sent.Add(3*time.Millisecond)
	}
	var subs atomic.Int64
	newSub := func(stats *wsStats) *wsConn {
		i := int(subs.Add(1))
		return &wsConn{stats: stats, shard: i % statShards, subs: []wsSub{{id: "v", joined: joined}}}
	}
	b.Run("serial", func(b *testing.B) {
		s := newSub(newWSStats())
		b.SetBytes(int64(len(msgs[0])))
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%k == 0 {
				s.subs[0].seq = 1
			}
			s.handle(msgs[i%k], recvs[i%k])
		}
		if g := s.stats.gaps.Load(); g != 0 {
			b.Fatalf("%d gaps", g)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		stats := newWSStats()
		b.SetBytes(int64(len(msgs[0])))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			s := newSub(stats)
			for i := 0; pb.Next(); i++ {
				if i%k == 0 {
					s.subs[0].seq = 1
				}
				s.handle(msgs[i%k], recvs[i%k])
			}
		})
	})
}

// BenchmarkSubscriberSession is the whole receive path over loopback: a
// WebSocket server in this process sends b.N diffs (as in
// BenchmarkSubscriberHandle, their probes sent at the subscription) to
// one subscriber session, which reads and handles them. ns/op is wall
// time with the server and the subscriber pipelined; cpu-ns/op is the
// process's CPU per message, both sides and the kernel's loopback
// included.
func BenchmarkSubscriberSession(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		defer c.CloseNow()
		// A context without Done: coder/websocket then arms no timer per
		// write, so the server's share of ns/op stays small.
		ctx := context.Background()
		if _, _, err := c.Read(ctx); err != nil { // the subscription
			return
		}
		sent := time.Now()
		msgs := make([][]byte, 64)
		for i := range msgs {
			msgs[i] = topDiff(i, sent.Add(time.Duration(i)*time.Microsecond))
		}
		for i := range b.N {
			if i%len(msgs) == 0 { // restart the chain with a snapshot
				c.Write(ctx, websocket.MessageText, []byte(`{"type":"snapshot","id":"v","seq":1,"total":0,"rows":[]}`))
			}
			if c.Write(ctx, websocket.MessageText, msgs[i%len(msgs)]) != nil {
				return
			}
		}
		c.Close(websocket.StatusNormalClosure, "")
	}))
	defer srv.Close()
	stats := newWSStats()
	sdk, err := rwclient.New([]string{srv.URL}, rwclient.WithToken("t"))
	if err != nil {
		b.Fatal(err)
	}
	s := &wsConn{sdk: sdk, base: srv.URL, board: "b", client: srv.Client(), stats: stats,
		subs: []wsSub{{id: "v", view: rwclient.Top(10)}}}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := selfCPU()
	err = s.session(context.Background(), make(chan struct{}, 1))
	b.StopTimer()
	b.ReportMetric(float64(selfCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		b.Fatalf("session: %v", err)
	}
	if got := stats.report(true); got.Messages < int64(b.N) || got.Gaps != 0 || len(got.Errors) > 0 {
		b.Fatalf("messages %d of %d, gaps %d, errors %v", got.Messages, b.N, got.Gaps, got.Errors)
	}
}
