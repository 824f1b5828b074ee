package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

// A stalled connection's socket options, set before it connects so that
// the server's socket fills soon and its slow timeout starts: an SO_RCVBUF
// of stalledRcvBuf (Linux doubles it for its bookkeeping), so that the
// window it offers stays small, and a TCP_MAXSEG of stalledMSS. The
// second matters more on loopback: the server's send buffer grows at
// once to 2 × 10 segments (its initial congestion window), and a
// loopback segment is 64 KiB, which makes 2.8 MB of buffer, where with
// 1 KiB segments it takes about 90 KB: 2 s of a top-100 at 10 diffs a
// second.
const (
	stalledRcvBuf = 4 << 10
	stalledMSS    = 1 << 10
)

// stalledCheck bounds the check, after the measured phase, of whether the
// server closed a stalled connection.
const stalledCheck = 2 * time.Second

// stalledConn is a connection that subscribes and then never reads: a
// client that stopped reading, which the gateway should close (4008) after
// its slow timeout while the other subscribers notice nothing. It carries
// one subscription, id "v". Owned by one goroutine.
type stalledConn struct {
	url   string // ws://…/v1/ws?access_token=…
	board string
	src   string // source address; empty: the default
	view  viewSpec
	stats *wsStats
	tries int // dials allowed
}

// runStalled starts stalled connections [cfg.StalledFrom, cfg.StalledTo)
// on wg: connection k subscribes to the plan's view of subscription k, as
// the regular subscriber of that index does.
func runStalled(ctx context.Context, cfg workerConfig, u string, stats *wsStats, sem chan struct{}, wg *sync.WaitGroup) {
	for k := cfg.StalledFrom; k < cfg.StalledTo; k++ {
		v, _ := cfg.Plan.view(k)
		c := &stalledConn{url: u, board: cfg.Board, src: cfg.SrcIP, view: v, stats: stats, tries: cfg.Reconnects + 1}
		wg.Go(func() { c.run(ctx, sem) })
	}
}

// run dials and subscribes (retrying a failed dial up to c.tries times in
// all), then waits for ctx to end without reading a byte, and then checks
// whether the server closed the connection meanwhile.
func (c *stalledConn) run(ctx context.Context, sem chan struct{}) {
	var ws *websocket.Conn
	var raw net.Conn
	for attempt := 0; ws == nil && attempt < c.tries && ctx.Err() == nil; attempt++ {
		if attempt > 0 {
			sleep(ctx, time.Duration(100*attempt)*time.Millisecond)
		}
		ws, raw, _ = c.dial(ctx, sem)
	}
	if ws == nil {
		if ctx.Err() == nil {
			c.stats.stalledFailed.Add(1)
		}
		return
	}
	defer ws.CloseNow()
	c.stats.stalled.Add(1)
	<-ctx.Done()
	if closedByPeer(raw) {
		c.stats.stalledClosed.Add(1)
	} else {
		c.stats.stalledOpen.Add(1)
	}
}

// dial connects with smallBuffers and sends the subscription,
// holding a slot of sem. It returns the socket under the WebSocket too,
// for the check at the end.
func (c *stalledConn) dial(ctx context.Context, sem chan struct{}) (*websocket.Conn, net.Conn, error) {
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	defer func() { <-sem }()
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var raw net.Conn // set by the transport's dial, which happens before Dial returns it
	client := stalledClient(c.src, &raw)
	ws, _, err := websocket.Dial(dctx, c.url, &websocket.DialOptions{HTTPClient: client, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		client.CloseIdleConnections() // a socket that came too late, or was refused the upgrade
		return nil, nil, err
	}
	sub, _ := json.Marshal(map[string]any{"type": "subscribe", "id": "v", "board": c.board, "view": c.view}) // cannot fail
	if err := ws.Write(dctx, websocket.MessageText, sub); err != nil {
		ws.CloseNow()
		return nil, nil, err
	}
	return ws, raw, nil
}

// stalledClient returns an HTTP client for one stalled connection's dial:
// from ip (empty: the default address), with smallBuffers, storing the
// socket in *raw. A client of its own, so that
// the socket stored is this dial's.
func stalledClient(ip string, raw *net.Conn) *http.Client {
	d := &net.Dialer{Timeout: 30 * time.Second, Control: smallBuffers}
	if ip != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(ip)}
	}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err == nil {
			*raw = conn
		}
		return conn, err
	}
	return &http.Client{Transport: &http.Transport{DialContext: dial, DisableCompression: true}}
}

// smallBuffers is a net.Dialer's Control: before the socket connects, it
// sets its SO_RCVBUF to stalledRcvBuf, so that the window scale agreed in
// the handshake is small too, and the MSS it announces to stalledMSS.
func smallBuffers(_, _ string, rc syscall.RawConn) error {
	var rerr, merr error
	err := rc.Control(func(fd uintptr) {
		rerr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, stalledRcvBuf)
		merr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, stalledMSS)
	})
	return errors.Join(err, rerr, merr)
}

// closedByPeer reports whether the peer has closed conn. It reads, for the
// first time, what the peer sent, discarding it, for at most stalledCheck:
// a peer that closed is seen at the end of its data (or as a reset), one
// that did not only when the deadline passes.
func closedByPeer(conn net.Conn) bool {
	conn.SetReadDeadline(time.Now().Add(stalledCheck))
	_, err := io.Copy(io.Discard, conn)
	return !errors.Is(err, os.ErrDeadlineExceeded)
}
