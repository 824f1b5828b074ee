package api

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"
)

// maxBacklog bounds what a stalled connection keeps unsent. The writers
// stop giving it messages while it is stalled (its subscriptions coalesce
// in the outbox instead), so only the message in flight and control
// frames (pongs, the close frame) wait here; more means a broken peer.
const maxBacklog = 1 << 20

// errBacklogFull is a stalled connection's write error past maxBacklog.
var errBacklogFull = errors.New("websocket: the client stopped reading and its backlog is full")

// flowConn is a hijacked WebSocket socket whose writes never block: what
// the socket does not take at once waits in a backlog that a goroutine of
// the connection's own drains, with a deadline. The writer pool (ws_pool.go)
// can so serve ten thousand connections with a few goroutines: a slow
// client stalls its own backlog, never a writer.
//
// It also corks: between cork and uncork every write is gathered, so that
// coder/websocket's frame header and payload, and several messages of one
// connection, leave in one system call.
//
// Invariant: bytes reach the socket in the order of the Write calls. While
// draining, every write appends to the backlog; only the drainer writes to
// the socket.
type flowConn struct {
	net.Conn
	raw     syscall.RawConn // nil: no non-blocking path, every write drains
	slowTO  time.Duration   // how long a drain may wait for the client
	stalled func()          // the drain failed: the client stopped reading
	resumed func()          // a drain finished: writers may send again
	drains  sync.WaitGroup  // a drain goroutine running

	mu       sync.Mutex // guards the fields below
	cork     *[]byte    // non-nil: writes gather here until uncork
	backlog  []byte     // unsent bytes, oldest first; owned by the drainer
	draining bool
	err      error // sticky: the first write error
	rawBuf   []byte
	rawN     int
	rawErr   error
	rawWrite func(fd uintptr) bool // bound once: RawConn.Write's argument
}

func newFlowConn(c net.Conn, slowTO time.Duration) *flowConn {
	f := &flowConn{Conn: c, slowTO: slowTO, stalled: func() {}, resumed: func() {}}
	if sc, ok := c.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			f.raw = raw
		}
	}
	f.rawWrite = f.writeOnce
	return f
}

// Write takes all of p or fails; it never waits for the client.
func (f *flowConn) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return 0, f.err
	}
	if f.cork != nil {
		*f.cork = append(*f.cork, p...)
		return len(p), nil
	}
	if err := f.sendLocked(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// corkTo gathers the following writes into *buf until uncork.
func (f *flowConn) corkTo(buf *[]byte) {
	f.mu.Lock()
	f.cork = buf
	f.mu.Unlock()
}

// uncork sends what the cork gathered, as one write, and keeps no
// reference to the cork's buffer.
func (f *flowConn) uncork() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	buf := f.cork
	f.cork = nil
	if f.err != nil || buf == nil || len(*buf) == 0 {
		return f.err
	}
	return f.sendLocked(*buf)
}

// busy reports whether a drain is under way: writers should give the
// connection nothing new until resumed is called.
func (f *flowConn) busy() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.draining || f.err != nil
}

// sendLocked writes p as far as the socket takes it now and hands the rest
// to a drain. f.mu is held.
func (f *flowConn) sendLocked(p []byte) error {
	if f.draining {
		if len(f.backlog)+len(p) > maxBacklog {
			f.err = errBacklogFull
			return f.err
		}
		f.backlog = append(f.backlog, p...)
		return nil
	}
	n, err := f.tryWrite(p)
	if err != nil {
		f.err = err
		return err
	}
	if n < len(p) {
		f.backlog = append([]byte(nil), p[n:]...)
		f.draining = true
		f.drains.Add(1)
		go f.drain()
	}
	return nil
}

// tryWrite makes one non-blocking write: how much of p the socket took,
// zero when its buffer is full. f.mu is held.
func (f *flowConn) tryWrite(p []byte) (int, error) {
	if f.raw == nil {
		return 0, nil
	}
	f.rawBuf, f.rawN, f.rawErr = p, 0, nil
	err := f.raw.Write(f.rawWrite)
	n, werr := f.rawN, f.rawErr
	f.rawBuf, f.rawErr = nil, nil
	switch {
	case err != nil:
		return 0, err
	case errors.Is(werr, syscall.EAGAIN):
		return n, nil
	case werr != nil:
		return 0, werr
	}
	return n, nil
}

// drain writes the backlog with a deadline of slowTO per round until it is
// empty, then calls resumed; a client that does not read within the
// deadline fails every later write and gets stalled. Ends also when the
// connection closes (the write fails at once).
func (f *flowConn) drain() {
	defer f.drains.Done()
	for {
		f.mu.Lock()
		buf := f.backlog
		f.backlog = nil
		if len(buf) == 0 {
			f.Conn.SetWriteDeadline(time.Time{}) // the non-blocking path checks it too
			f.draining = false
			f.mu.Unlock()
			f.resumed()
			return
		}
		f.mu.Unlock()
		f.Conn.SetWriteDeadline(time.Now().Add(f.slowTO))
		if _, err := f.Conn.Write(buf); err != nil {
			f.mu.Lock()
			f.err = err
			f.mu.Unlock()
			if errors.Is(err, os.ErrDeadlineExceeded) {
				f.stalled()
			}
			return
		}
	}
}

// flowWriter hands coder/websocket a flowConn with small buffers instead
// of net/http's: the hijacked connection keeps a bufio.Reader of
// readBufSize (client messages are few and small; larger ones are read
// straight through) and a bufio.Writer of 16 bytes (the writers cork, so
// a frame still leaves in one write). That is 8 KiB less per connection.
type flowWriter struct {
	http.ResponseWriter
	slowTO time.Duration
	conn   *flowConn // set by Hijack
}

// readBufSize is a connection's read buffer: client messages are few,
// and a longer one is read past it, straight into the message.
const readBufSize = 128

// Hijack takes over the connection, carrying over whatever the client
// sent after the upgrade request.
func (w *flowWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	early, _ := brw.Reader.Peek(brw.Reader.Buffered())
	w.conn = newFlowConn(c, w.slowTO)
	br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(early)), w.conn), max(readBufSize, len(early)))
	if _, err := br.Peek(len(early)); err != nil { // buffered: Accept keeps only what br holds
		c.Close()
		return nil, nil, err
	}
	return w.conn, bufio.NewReadWriter(br, bufio.NewWriterSize(w.conn, 16)), nil
}

// Unwrap exposes the wrapped writer to http.ResponseController.
func (w *flowWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
