package loadtest

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// compressShape is one kind of live message, as a sequence of successive
// diffs of one view (each a new state of the same view: what context
// takeover can learn from).
type compressShape struct {
	name string
	msg  func(k int) []byte
}

// profiledRow is a row of a board with profiles (name, avatar, country).
type profiledRow struct {
	Rank     int     `json:"rank"`
	Member   string  `json:"member"`
	Score    float64 `json:"score"`
	Subscore float64 `json:"subscore"`
	Name     string  `json:"name"`
	Avatar   string  `json:"avatar"`
	Country  string  `json:"country"`
}

func compressShapes() []compressShape {
	sent := time.UnixMicro(1_795_000_000_000_000)
	return []compressShape{
		{"top10-diff", func(k int) []byte { return topDiff(k, sent.Add(time.Duration(k)*time.Millisecond)) }},
		{"top10-profiles", func(k int) []byte {
			prev := uint64(k + 1)
			rows := make([]profiledRow, 10)
			for r := range rows {
				j := 100_000 - 1 - (r+k)%50
				rows[r] = profiledRow{Rank: r + 1, Member: fmt.Sprintf("m%d", j), Score: float64(1_000_000 - 97*r + k),
					Name: fmt.Sprintf("Player %d", j), Avatar: fmt.Sprintf("https://cdn.example.com/avatars/%d.png", j), Country: "DE"}
			}
			b, _ := json.Marshal(map[string]any{"type": "diff", "id": "v", "seq": prev + 1, "prev": prev, "total": 100_000, "rows": rows, "gone": []int{}})
			return b
		}},
		{"around-diff", func(k int) []byte { // a climb of the watched player: 11 rows around it shift
			prev := uint64(k + 1)
			m := benchDiff{Type: "diff", ID: "v", Seq: prev + 1, Prev: &prev, Total: 100_000}
			for r := range 11 {
				m.Rows = append(m.Rows, benchRow{Rank: 40_000 - k + r, Member: fmt.Sprintf("m%d", 50_000+r+k), Score: float64(61_000 + 13*k - r)})
			}
			b, _ := json.Marshal(m)
			return b
		}},
		{"rank-diff", func(k int) []byte {
			prev := uint64(k + 1)
			m := benchDiff{Type: "diff", ID: "v", Seq: prev + 1, Prev: &prev, Total: 100_000,
				Rows: []benchRow{{Rank: 5, Member: fmt.Sprintf("m%d", 7_000+k), Score: float64(990_000 + k)}}}
			b, _ := json.Marshal(m)
			return b
		}},
	}
}

// BenchmarkDeflateOnce is the cost of compressing a message once for all
// its watchers: permessage-deflate without context takeover (each message
// on its own, so one compressed frame serves every connection that
// negotiated it), flate level 1 as coder/websocket uses. B/msg is the
// compressed payload against raw-B/msg.
func BenchmarkDeflateOnce(b *testing.B) {
	for _, s := range compressShapes() {
		b.Run(s.name, func(b *testing.B) {
			msgs := make([][]byte, 64)
			for i := range msgs {
				msgs[i] = s.msg(i)
			}
			var buf bytes.Buffer
			fw, _ := flate.NewWriter(&buf, flate.BestSpeed)
			var in, out int
			for i := 0; b.Loop(); i++ {
				buf.Reset()
				fw.Reset(&buf)
				m := msgs[i%len(msgs)]
				fw.Write(m)
				fw.Flush()
				in, out = in+len(m), out+buf.Len()-4 // the 00 00 ff ff tail is not sent (RFC 7692, 7.2.1)
			}
			b.ReportMetric(float64(in)/float64(b.N), "raw-B/msg")
			b.ReportMetric(float64(out)/float64(b.N), "B/msg")
		})
	}
}

// BenchmarkCompressFanout sends each message of a shape to 200 WebSocket
// connections over loopback (coder/websocket on both ends, as the plane's
// handshake and the SDK use) with permessage-deflate off, on without
// context takeover, and on with it. Per delivered message: wire-B/msg is
// what the server wrote to the sockets (frames and headers), cpu-ns/msg
// the process's CPU (the server's compression, the clients' inflation and
// both sides' syscalls: a phone pays the inflation), and heap-B/conn the
// Go heap each connection holds after its first message, both ends.
func BenchmarkCompressFanout(b *testing.B) {
	modes := []struct {
		name string
		mode websocket.CompressionMode
	}{{"none", websocket.CompressionDisabled}, {"deflate", websocket.CompressionNoContextTakeover}, {"deflate-takeover", websocket.CompressionContextTakeover}}
	for _, s := range compressShapes() {
		for _, m := range modes {
			b.Run(s.name+"/"+m.name, func(b *testing.B) { benchCompressFanout(b, s, m.mode, 200) })
		}
	}
}

func benchCompressFanout(b *testing.B, s compressShape, mode websocket.CompressionMode, n int) {
	var wire atomic.Int64
	conns := make(chan *websocket.Conn, n)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: mode, CompressionThreshold: 64})
		if err != nil {
			return
		}
		conns <- c
	}))
	srv.Listener = &countingListener{Listener: srv.Listener, n: &wire}
	srv.Start()
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan struct{}, n)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	heap0 := heapInuse()
	servers := make([]*websocket.Conn, n)
	for i := range n {
		c, _, err := websocket.Dial(ctx, "ws"+srv.URL[len("http"):], &websocket.DialOptions{CompressionMode: mode, CompressionThreshold: 64})
		if err != nil {
			b.Fatal(err)
		}
		c.SetReadLimit(1 << 20)
		servers[i] = <-conns
		wg.Go(func() {
			defer c.CloseNow()
			for {
				if _, _, err := c.Read(ctx); err != nil {
					return
				}
				got <- struct{}{}
			}
		})
	}
	msgs := make([][]byte, 64)
	for i := range msgs {
		msgs[i] = s.msg(i)
	}
	send := func(m []byte) {
		for _, c := range servers {
			if err := c.Write(context.Background(), websocket.MessageText, m); err != nil {
				b.Fatal(err)
			}
		}
		for range n {
			<-got
		}
	}
	send(msgs[0]) // the compressors exist after a first message
	heap := heapInuse() - heap0
	wire.Store(0)
	cpu0 := cpuTime()
	var raw int
	for i := 0; b.Loop(); i++ {
		m := msgs[i%len(msgs)]
		raw += len(m)
		send(m)
	}
	delivered := float64(b.N * n)
	b.ReportMetric(float64(raw)/float64(b.N), "raw-B/msg")
	b.ReportMetric(float64(wire.Load())/delivered, "wire-B/msg")
	b.ReportMetric(float64(cpuTime()-cpu0)/delivered, "cpu-ns/msg")
	b.ReportMetric(float64(heap)/float64(n), "heap-B/conn")
	for _, c := range servers {
		c.CloseNow()
	}
}

// countingListener counts the bytes its connections write.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: l.n}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	k, err := c.Conn.Write(p)
	c.n.Add(int64(k))
	return k, err
}

// heapInuse is the Go heap in use after a collection.
func heapInuse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// cpuTime is the process's user and system CPU so far, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
