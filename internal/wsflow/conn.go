package wsflow

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// MaxBacklog bounds what a stalled connection keeps unsent. The writers
// stop giving it messages while it is stalled (its subscriptions coalesce
// in the outbox instead), so only the message in flight and control
// frames (pongs, the close frame) wait here; more means a broken peer.
const MaxBacklog = 1 << 20

// ErrBacklogFull is a stalled connection's write error past MaxBacklog.
var ErrBacklogFull = errors.New("websocket: the client stopped reading and its backlog is full")

// Conn is a hijacked WebSocket socket whose writes never block: what
// the socket does not take at once waits in a backlog that a goroutine of
// the connection's own drains, with a deadline. A writer pool
// can so serve ten thousand connections with a few goroutines: a slow
// client stalls its own backlog, never a writer.
//
// Two writers share the socket: the pool sends whole data frames of its
// own (send), coder/websocket writes control frames (pings, pongs, close)
// through Write. Frames must not interleave, so coder/websocket gets a
// bufio.Writer of ControlFrameMax bytes: each control frame (at most 125
// bytes of payload) then reaches Write whole, in one call; it writes
// nothing else, since every data message goes through the pool.
//
// Invariant: bytes reach the socket in the order of the calls. While
// draining, every write appends to the backlog; only the drainer writes to
// the socket.
type Conn struct {
	net.Conn
	raw     syscall.RawConn // nil: no non-blocking path, every write drains
	slowTO  time.Duration   // how long a drain may wait for the client
	stalled func()          // the drain failed: the client stopped reading
	resumed func()          // a drain finished: writers may send again
	drains  sync.WaitGroup  // a drain goroutine running

	stuck atomic.Bool // draining or err set: written under mu, read by busy without it

	closeOnce sync.Once
	closeErr  error
	lingers   atomic.Bool // set by LingerOnClose

	mu       sync.Mutex // guards the fields below
	backlog  []byte     // unsent bytes, oldest first; owned by the drainer
	draining bool
	err      error // sticky: the first write error
	// writeOnce's argument and results: fields, not a closure's captures,
	// so that a write allocates nothing.
	rawBuf   []byte
	rawN     int
	rawErr   error
	rawWrite func(fd uintptr) // f.writeOnce, bound once
}

func NewConn(c net.Conn, slowTO time.Duration) *Conn {
	f := &Conn{Conn: c, slowTO: slowTO, stalled: func() {}, resumed: func() {}}
	if sc, ok := c.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			f.raw = raw
		}
	}
	f.rawWrite = f.writeOnce
	return f
}

// lingerTimeout bounds how long a closed connection keeps reading what the
// peer still sends (see Close).
const lingerTimeout = time.Second

// LingerOnClose makes Close linger: for a connection whose peer's last
// message was refused unread (1009), with no read of the socket in progress.
func (f *Conn) LingerOnClose() { f.lingers.Store(true) }

// Close ends the connection. After LingerOnClose it does so gracefully: the
// write side first, so that the peer gets the last frames and then a FIN,
// while a goroutine of the connection's own reads and drops whatever the
// peer still sends, until it closes too or lingerTimeout passes, and then
// closes the socket. Closing a socket with unread bytes makes the kernel
// answer with a reset, and a reset can destroy the close frame before the
// client reads it: a client whose oversized message was refused with 1009
// would see 1006 instead, and reconnect to send it again. Wait waits for
// the linger. Only then: coder/websocket's reader must not be blocked on
// the socket while it closes, or it races with the library's own close.
func (f *Conn) Close() error {
	f.closeOnce.Do(func() {
		cw, ok := f.Conn.(interface{ CloseWrite() error })
		if !ok || !f.lingers.Load() || cw.CloseWrite() != nil {
			f.closeErr = f.Conn.Close()
			return
		}
		f.drains.Add(1)
		go f.linger()
	})
	return f.closeErr
}

// linger drops what the peer sends until it closes or lingerTimeout
// passes, then closes the socket.
func (f *Conn) linger() {
	defer f.drains.Done()
	defer f.Conn.Close()
	f.Conn.SetReadDeadline(time.Now().Add(lingerTimeout))
	io.Copy(io.Discard, f.Conn)
}

// OnStall sets what runs once a drain fails because the client stopped
// reading (by default nothing). Set it before the first write.
func (f *Conn) OnStall(fn func()) { f.stalled = fn }

// OnResume sets what runs once a drain has emptied the backlog: writers may
// send again (by default nothing). Set it before the first write.
func (f *Conn) OnResume(fn func()) { f.resumed = fn }

// Wait waits for a running drain to end: after the socket is closed, it
// ends at once.
func (f *Conn) Wait() { f.drains.Wait() }

// Hold marks the connection as draining, as a client that stopped reading
// would, without writing anything, until the returned release starts the
// drain of whatever was sent meanwhile. For tests of what writers and
// outboxes do while a connection is stalled.
func (f *Conn) Hold() (release func()) {
	f.mu.Lock()
	f.draining = true
	f.stuck.Store(true)
	f.mu.Unlock()
	return func() {
		f.drains.Add(1)
		go f.drain()
	}
}

// Write takes all of p or fails; it never waits for the client.
func (f *Conn) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return 0, f.err
	}
	if err := f.sendLocked(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Send writes p, a whole number of frames, as one write: the writer
// pool's path. It keeps no reference to p.
func (f *Conn) Send(p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	return f.sendLocked(p)
}

// Busy reports whether a drain is under way (writers should give the
// connection nothing new until resumed is called) or a write failed. One
// atomic load: the writers ask before every turn.
func (f *Conn) Busy() bool { return f.stuck.Load() }

// sendLocked writes p as far as the socket takes it now and hands the rest
// to a drain. f.mu is held.
func (f *Conn) sendLocked(p []byte) error {
	if f.draining {
		if len(f.backlog)+len(p) > MaxBacklog {
			f.err = ErrBacklogFull
			f.stuck.Store(true)
			return f.err
		}
		f.backlog = append(f.backlog, p...)
		return nil
	}
	n, err := f.tryWrite(p)
	if err != nil {
		f.err = err
		f.stuck.Store(true)
		return err
	}
	if n < len(p) {
		f.backlog = append([]byte(nil), p[n:]...)
		f.draining = true
		f.stuck.Store(true)
		f.drains.Add(1)
		go f.drain()
	}
	return nil
}

// tryWrite makes one non-blocking write: how much of p the socket took,
// zero when its buffer is full. f.mu is held.
//
// It writes inside RawConn.Control, not RawConn.Write: Control holds a
// reference on the descriptor for the call, as Write does, so a concurrent
// Close cannot release the number to the next accepted connection
// mid-write (the close waits for the reference, and a closed descriptor
// fails at once). What Write adds is not needed here and costs a cache
// miss per write at ten thousand connections: the poller's
// deadline-and-wait state (prepareWrite: this write never waits, and no
// deadline is set outside a drain, during which tryWrite is not called)
// and the write lock, which only orders Go's own writers on the
// descriptor: the one other writer, the drain, never runs while tryWrite
// may (f.draining, under f.mu).
func (f *Conn) tryWrite(p []byte) (int, error) {
	if f.raw == nil {
		return 0, nil
	}
	f.rawBuf, f.rawN, f.rawErr = p, 0, nil
	err := f.raw.Control(f.rawWrite)
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
func (f *Conn) drain() {
	defer f.drains.Done()
	for {
		f.mu.Lock()
		buf := f.backlog
		f.backlog = nil
		if len(buf) == 0 {
			f.Conn.SetWriteDeadline(time.Time{}) // the non-blocking path checks it too
			f.draining = false
			f.stuck.Store(f.err != nil)
			f.mu.Unlock()
			f.resumed()
			return
		}
		f.mu.Unlock()
		f.Conn.SetWriteDeadline(time.Now().Add(f.slowTO))
		if _, err := f.Conn.Write(buf); err != nil {
			f.mu.Lock()
			f.err = err
			f.stuck.Store(true)
			f.mu.Unlock()
			if errors.Is(err, os.ErrDeadlineExceeded) {
				f.stalled()
			}
			return
		}
	}
}

// ControlFrameMax is the longest control frame: a 2-byte header and at
// most 125 bytes of payload (RFC 6455, section 5.5).
const ControlFrameMax = 2 + 125

// Writer hands coder/websocket a Conn with small buffers instead
// of net/http's: the hijacked connection keeps a bufio.Reader of
// readBufSize and a bufio.Writer of ControlFrameMax bytes (see Conn),
// 8 KiB less per connection than net/http's 4 KiB each.
type Writer struct {
	http.ResponseWriter
	SlowTimeout time.Duration // how long a drain may wait for the client
	conn        *Conn         // set by Hijack
}

// Conn returns the connection Hijack made, or nil before it.
func (w *Writer) Conn() *Conn { return w.conn }

// readBufSize is a connection's read buffer: client messages are few,
// and a longer one is read past it, straight into the message.
const readBufSize = 128

// Hijack takes over the connection, carrying over whatever the client
// sent after the upgrade request.
func (w *Writer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	early, _ := brw.Reader.Peek(brw.Reader.Buffered())
	w.conn = NewConn(c, w.SlowTimeout)
	var src io.Reader = w.conn
	if len(early) > 0 { // rare: a client that sent before the upgrade's answer
		src = io.MultiReader(bytes.NewReader(bytes.Clone(early)), w.conn)
	}
	br := bufio.NewReaderSize(src, max(readBufSize, len(early)))
	if _, err := br.Peek(len(early)); err != nil { // buffered: Accept keeps only what br holds
		c.Close()
		return nil, nil, err
	}
	return w.conn, bufio.NewReadWriter(br, bufio.NewWriterSize(w.conn, ControlFrameMax)), nil
}

// Unwrap exposes the wrapped writer to http.ResponseController.
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// AppendTextHeader appends the header of one unfragmented, unmasked
// WebSocket text frame (RFC 6455, section 5.2) of an n-byte payload: FIN
// and opcode 1, then the length in 7, 7+16 or 7+64 bits. The caller
// appends the payload. Writers frame data messages themselves, rather than
// through coder/websocket's Conn.Write, so that a turn's messages leave in
// one write without a lock, a context and a buffer copy per message;
// coder/websocket frames everything else (see Conn).
func AppendTextHeader(dst []byte, n int) []byte {
	const finText = 0x81
	switch {
	case n <= 125:
		return append(dst, finText, byte(n))
	case n <= 0xffff:
		dst = append(dst, finText, 126)
		return binary.BigEndian.AppendUint16(dst, uint16(n))
	}
	dst = append(dst, finText, 127)
	return binary.BigEndian.AppendUint64(dst, uint64(n))
}
