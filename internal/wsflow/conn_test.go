package wsflow

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/internal/await"
)

// loopbackPair returns the server and client sides of one loopback TCP
// connection; its listener is closed before it returns.
func loopbackPair(tb testing.TB) (server, client net.Conn) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		client.Close()
		tb.Fatal(err)
	}
	return server, client
}

// flowPair returns a Conn over the server side of a loopback TCP
// connection, and the client side.
func flowPair(t *testing.T, slowTO time.Duration) (*Conn, net.Conn) {
	t.Helper()
	server, client := loopbackPair(t)
	// A small send buffer: a client that does not read stalls the writer
	// once its receive buffer (128 KiB by default) is full, not after
	// megabytes. The client's buffer stays as it is: tiny windows crawl.
	server.(*net.TCPConn).SetWriteBuffer(4 << 10)
	client.SetReadDeadline(time.Now().Add(30 * time.Second)) // a lost byte fails, not hangs
	f := NewConn(server, slowTO)
	t.Cleanup(func() {
		client.Close()
		f.Close()
		f.Wait()
	})
	return f, client
}

// chunk is a test record: a 1-byte writer id, a 4-byte sequence number,
// then filler up to size, all in one call, so that the reader can tell a
// torn or reordered record.
func chunk(writer byte, seq uint32, size int) []byte {
	b := make([]byte, size)
	b[0] = writer
	binary.BigEndian.PutUint32(b[1:], seq)
	for i := 5; i < size; i++ {
		b[i] = writer
	}
	return b
}

// TestFlowConnOrderThroughStall: two writers (send, like the pool, and
// Write, like coder/websocket's control frames) write while the client
// does not read, so that the socket fills and the drain takes over; once
// the client reads, every record arrives whole and in each writer's order,
// and resumed is called.
func TestFlowConnOrderThroughStall(t *testing.T) {
	f, client := flowPair(t, 10*time.Second)
	var resumed atomic.Int32
	f.OnResume(func() { resumed.Add(1) })
	const perWriter, bigSize, smallSize = 100, 8 << 10, 100 // 0.8 MB: within MaxBacklog
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range uint32(perWriter) {
			if err := f.Send(chunk('S', i, bigSize)); err != nil {
				t.Errorf("send %d: %v", i, err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for i := range uint32(perWriter) {
			if _, err := f.Write(chunk('W', i, smallSize)); err != nil {
				t.Errorf("Write %d: %v", i, err)
				return
			}
		}
	}()
	wg.Wait() // neither writer waited for the client: it has read nothing yet
	if !f.Busy() {
		t.Fatal("0.8 MB written to a client that reads nothing, and no drain under way")
	}
	next := map[byte]uint32{}
	sizes := map[byte]int{'S': bigSize, 'W': smallSize}
	for next['S'] < perWriter || next['W'] < perWriter {
		var head [5]byte
		if _, err := io.ReadFull(client, head[:]); err != nil {
			t.Fatalf("after S %d, W %d: %v", next['S'], next['W'], err)
		}
		w, seq := head[0], binary.BigEndian.Uint32(head[1:])
		size, ok := sizes[w]
		if !ok || seq != next[w] {
			t.Fatalf("record from %q seq %d, want S %d or W %d: torn or reordered", w, seq, next['S'], next['W'])
		}
		rest := make([]byte, size-5)
		if _, err := io.ReadFull(client, rest); err != nil {
			f.mu.Lock()
			t.Fatalf("record %q %d: %v (backlog %d, draining %v, err %v)", w, seq, err, len(f.backlog), f.draining, f.err)
		}
		if !bytes.Equal(rest, bytes.Repeat([]byte{w}, size-5)) {
			t.Fatalf("record %q %d torn", w, seq)
		}
		next[w]++
	}
	await.For(t, 5*time.Second, func() error {
		if f.Busy() || resumed.Load() == 0 {
			return fmt.Errorf("busy %v, resumed %d times", f.Busy(), resumed.Load())
		}
		return nil
	})
	// Drained: writes go straight to the socket again.
	if err := f.Send(chunk('S', perWriter, 10)); err != nil {
		t.Fatalf("send after the drain: %v", err)
	}
}

// TestFlowConnStalled: a client that never reads is reported stalled once
// a drain waited slowTO, and every later write fails at once.
func TestFlowConnStalled(t *testing.T) {
	f, _ := flowPair(t, 200*time.Millisecond)
	stalled := make(chan struct{})
	f.OnStall(func() { close(stalled) })
	big := make([]byte, 256<<10)
	for i := 0; !f.Busy(); i++ {
		if i > 1000 {
			t.Fatal("256 MB taken by a client that reads nothing")
		}
		if err := f.Send(big); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-stalled:
	case <-time.After(10 * time.Second):
		t.Fatal("not stalled 10 s after the drain began")
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Fatal("a write after the stall succeeded")
	}
}

// TestFlowConnBacklogBound: what waits while draining is bounded; past
// MaxBacklog a write fails instead of growing memory.
func TestFlowConnBacklogBound(t *testing.T) {
	f, _ := flowPair(t, time.Minute)
	big := make([]byte, 256<<10)
	var err error
	for i := 0; err == nil; i++ {
		if i > 1000 {
			t.Fatal("no bound on the backlog")
		}
		err = f.Send(big)
	}
	if err != ErrBacklogFull {
		t.Fatalf("err %v, want ErrBacklogFull", err)
	}
	f.mu.Lock()
	n := len(f.backlog)
	f.mu.Unlock()
	if n > MaxBacklog {
		t.Fatalf("backlog %d bytes, bound %d", n, MaxBacklog)
	}
}

// TestTextFramesReadByCoderWebsocket: frames of every length encoding
// (7, 16 and 64 bits) that the writers build themselves, sent in one write
// with a ping from coder/websocket in between, read back whole by a
// coder/websocket client.
func TestTextFramesReadByCoderWebsocket(t *testing.T) {
	sizes := []int{0, 1, 125, 126, 127, 65535, 65536, 70000}
	msgs := make([][]byte, len(sizes))
	for i, n := range sizes {
		msgs[i] = []byte(strings.Repeat(string(rune('a'+i)), n))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fw := &Writer{ResponseWriter: w, SlowTimeout: 5 * time.Second}
		ws, err := websocket.Accept(fw, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		done := make(chan struct{})
		go func() { // takes the pong; ends when the client closes
			ws.Read(context.Background())
			close(done)
		}()
		var frames []byte
		for i, m := range msgs {
			frames = AppendTextHeader(frames, len(m))
			frames = append(frames, m...)
			if i == len(msgs)/2 {
				fw.Conn().Send(frames)
				frames = nil
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				ws.Ping(ctx) // a control frame between the data frames
				cancel()
			}
		}
		fw.Conn().Send(frames)
		<-done
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	for i, want := range msgs {
		typ, got, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("message %d (%d bytes): %v", i, len(want), err)
		}
		if typ != websocket.MessageText || !bytes.Equal(got, want) {
			t.Fatalf("message %d: type %v, %d bytes, want text of %d", i, typ, len(got), len(want))
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
}

// TestCloseLingers: closing a connection whose peer sent bytes the server
// never read still delivers the server's last bytes and a clean end, not a
// reset that would destroy them (a 1009 close frame, in the gateway).
func TestCloseLingers(t *testing.T) {
	f, client := flowPair(t, 5*time.Second)
	if _, err := client.Write(make([]byte, 256<<10)); err != nil { // never read by the server
		t.Fatal(err)
	}
	if err := f.Send([]byte("bye")); err != nil {
		t.Fatal(err)
	}
	f.LingerOnClose()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(client)
	if err != nil || string(got) != "bye" {
		t.Fatalf("read %q, %v; want \"bye\" and a clean end", got, err)
	}
	client.Close()
	f.Wait() // the linger ends once the client has closed
}
