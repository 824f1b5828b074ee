package wsflow

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The delivery plane writes data frames to the hijacked socket itself and
// leaves control frames to coder/websocket (conn.go). That is safe only
// while the library (1) writes every control frame through the bufio.Writer
// the hijack gives it, whole, in one Write of the socket when that buffer
// holds ControlFrameMax bytes, and writes nothing else there (it sends no
// data frame of its own: we never call its Write), and (2) sets no deadline
// on the socket (the drain owns the write deadline). These tests pin both
// against the real library, so that an upgrade that breaks one fails CI.

// recordingConn records every Write call and every deadline set on it.
type recordingConn struct {
	net.Conn
	mu        sync.Mutex
	writes    [][]byte
	deadlines []string
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes = append(c.writes, append([]byte(nil), p...))
	c.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *recordingConn) note(what string) {
	c.mu.Lock()
	c.deadlines = append(c.deadlines, what)
	c.mu.Unlock()
}

func (c *recordingConn) SetDeadline(t time.Time) error {
	c.note("SetDeadline")
	return c.Conn.SetDeadline(t)
}
func (c *recordingConn) SetReadDeadline(t time.Time) error {
	c.note("SetReadDeadline")
	return c.Conn.SetReadDeadline(t)
}
func (c *recordingConn) SetWriteDeadline(t time.Time) error {
	c.note("SetWriteDeadline")
	return c.Conn.SetWriteDeadline(t)
}

// recordingWriter hijacks as Writer does: the connection wrapped, a
// bufio.Writer of ControlFrameMax bytes.
type recordingWriter struct {
	http.ResponseWriter
	conn *recordingConn
}

func (w *recordingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.conn = &recordingConn{Conn: c}
	return w.conn, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(w.conn, ControlFrameMax)), nil
}

// frameLen returns the length of the WebSocket frame at the start of p
// (a server's frames are unmasked), or -1 where p holds no whole header.
func frameLen(p []byte) int {
	if len(p) < 2 {
		return -1
	}
	n, hdr := int(p[1]&0x7f), 2
	switch n {
	case 126:
		if len(p) < 4 {
			return -1
		}
		n, hdr = int(p[2])<<8|int(p[3]), 4
	case 127:
		return -1 // never for a control frame
	}
	return hdr + n
}

func TestCoderWebSocketWritesControlFramesWholeAndSetsNoDeadline(t *testing.T) {
	conns := make(chan *recordingConn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &recordingWriter{ResponseWriter: w}
		ws, err := websocket.Accept(rw, r, nil)
		if err != nil {
			return
		}
		conns <- rw.conn
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		go func() { _, _, _ = ws.Read(ctx) }() // reads answer the client's pings with pongs
		for range 5 {
			_ = ws.Ping(ctx) // the server's own pings, answered by the client
		}
		_ = ws.Close(websocket.StatusGoingAway, strings.Repeat("x", 100)) // a long close reason
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range 5 {
			_ = c.Ping(ctx) // the client's pings, which the server answers with pongs
		}
	}()
	_, _, _ = c.Read(ctx) // until the server's close
	c.CloseNow()
	rc := <-conns
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.deadlines) > 0 {
		t.Errorf("coder/websocket set deadlines on the hijacked socket: %v (the drain owns them: conn.go)", rc.deadlines)
	}
	var pings, pongs, closes int
	for i, w := range rc.writes {
		if n := frameLen(w); n != len(w) {
			t.Fatalf("write %d of %d bytes is not one whole frame (header says %d): control frames would interleave with data frames", i, len(w), n)
		}
		switch op := w[0] & 0x0f; op {
		case 0x9:
			pings++
		case 0xA:
			pongs++
		case 0x8:
			closes++
		case 0x1, 0x2, 0x0:
			t.Fatalf("write %d is a data frame (opcode %#x): the library must not write data frames", i, op)
		}
	}
	if pings == 0 || closes != 1 {
		t.Fatalf("recorded %d pings, %d pongs, %d closes: the test did not exercise the control frames", pings, pongs, closes)
	}
}
