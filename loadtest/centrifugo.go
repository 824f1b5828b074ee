package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// CentrifugoIdleConfig is a side-by-side of "How far one node goes"
// (docs/BENCHMARKS.md): idle subscribed WebSockets to a Centrifugo server.
type CentrifugoIdleConfig struct {
	// URL is Centrifugo's WebSocket endpoint on loopback, e.g.
	// ws://127.0.0.1:18200/connection/websocket.
	URL string
	// Conns is the number of connections; each subscribes to one channel:
	// every fourth to the shared channel "lobby", the rest each to its own
	// (as rankwire's mix has one shared view and per-player views).
	Conns int
	// PID is the server's process: its CPU and RSS are read from /proc.
	PID int
	// Pprof is the server's pprof host:port, for a collection before each
	// RSS reading (Centrifugo: http_server with debug enabled); "" for none.
	Pprof string
	// Hold is how long the connections stay open after the last connected.
	Hold time.Duration
	// SrcIPs is how many 127.0.0.x source addresses the connections
	// spread over (from 127.0.0.2), so that ephemeral ports do not run out.
	SrcIPs int
}

// CentrifugoIdleReport is what CentrifugoIdle measured.
type CentrifugoIdleReport struct {
	Connected      int     `json:"connected"`
	ConnectSeconds float64 `json:"connect_seconds"`
	RSSIdle        int64   `json:"rss_idle"`
	RSSConnected   int64   `json:"rss_connected"`
	RSSPerConn     float64 `json:"rss_per_connection"`
	HoldCores      float64 `json:"hold_cores"` // the server's CPU while the connections were held
}

// String prints the report as one line.
func (r CentrifugoIdleReport) String() string {
	return fmt.Sprintf("centrifugo: %d connected in %.1f s; RSS %s idle, %s connected (%.1f KiB per connection); %.3f cores held",
		r.Connected, r.ConnectSeconds, mib(r.RSSIdle), mib(r.RSSConnected), r.RSSPerConn/1024, r.HoldCores)
}

// CentrifugoIdle opens the connections (Centrifugo's JSON protocol: a
// connect command without a token, for a server in insecure client mode,
// then a subscribe), answers the server's pings while it holds them, and
// reports the server's RSS per connection. It closes every connection
// before it returns.
func CentrifugoIdle(ctx context.Context, cfg CentrifugoIdleConfig) (CentrifugoIdleReport, error) {
	var r CentrifugoIdleReport
	if err := checkLoopback(strings.Replace(cfg.URL, "ws://", "http://", 1)); err != nil {
		return r, err
	}
	collectGarbage(ctx, cfg.Pprof)
	idle, _ := readProc(cfg.PID)
	r.RSSIdle = idle.RSS
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	clients := centrifugoClients(max(cfg.SrcIPs, 1))
	start := time.Now()
	for i := range cfg.Conns {
		c, err := centrifugoJoin(ctx, clients[i%len(clients)], cfg.URL, false, centrifugoIdleChannel(i))
		if err != nil {
			return r, fmt.Errorf("loadtest: centrifugo connection %d: %w", i, err)
		}
		r.Connected++
		wg.Go(func() { centrifugoHold(ctx, c) })
	}
	r.ConnectSeconds = time.Since(start).Seconds()
	held, _ := readProc(cfg.PID)
	select {
	case <-ctx.Done():
		return r, ctx.Err()
	case <-time.After(cfg.Hold):
	}
	collectGarbage(ctx, cfg.Pprof)
	conn, _ := readProc(cfg.PID)
	r.RSSConnected = conn.RSS
	if r.Connected > 0 {
		r.RSSPerConn = float64(conn.RSS-idle.RSS) / float64(r.Connected)
	}
	if conn.At.After(held.At) {
		r.HoldCores = cores(held, conn)
	}
	return r, nil
}

// centrifugoClients are HTTP clients dialling from 127.0.0.2 on.
func centrifugoClients(n int) []*http.Client {
	out := make([]*http.Client, n)
	for i := range out {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%250))}}
		out[i] = &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	}
	return out
}

// centrifugoIdleChannel is connection i's channel: every fourth on the
// shared "lobby", the rest each on its own.
func centrifugoIdleChannel(i int) string {
	if i%4 == 0 {
		return "lobby"
	}
	return fmt.Sprintf("p_%d", i) // no colon: that would name a namespace
}

// centrifugoReply reads until the reply to command id, a line of a frame
// (a frame may carry several, a push beside the reply); an error reply is
// an error.
func centrifugoReply(ctx context.Context, c *websocket.Conn, id int) error {
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return err
		}
		for line := range bytes.SplitSeq(data, []byte{'\n'}) {
			var m struct {
				ID    int             `json:"id"`
				Error json.RawMessage `json:"error"`
			}
			if json.Unmarshal(line, &m) != nil || m.ID != id {
				continue
			}
			if len(m.Error) > 0 {
				return fmt.Errorf("command %d refused: %s", id, m.Error)
			}
			return nil
		}
	}
}

// centrifugoHold answers the server's pings ({}) with pongs ({}) until ctx
// ends, then closes c.
func centrifugoHold(ctx context.Context, c *websocket.Conn) {
	defer c.CloseNow()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		if string(data) == "{}" {
			_ = c.Write(ctx, websocket.MessageText, []byte("{}"))
		}
	}
}
