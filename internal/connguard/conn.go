package connguard

import (
	"errors"
	"io"
	"syscall"
)

// The methods below pass through to the accepted connection what net/http,
// coder/websocket and the gateway's own WebSocket writer look for on a
// *net.TCPConn, so that wrapping costs none of its fast paths: the raw
// descriptor for non-blocking writes (syscall.Conn), half-closes before a
// final close (net/http's closeWriteAndWait), and sendfile (io.ReaderFrom).

var errNotSupported = errors.New("connguard: not supported by the underlying connection")

// SyscallConn returns the underlying connection's raw descriptor.
func (c *conn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errNotSupported
}

// CloseWrite shuts down the writing side of the underlying connection.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errNotSupported
}

// CloseRead shuts down the reading side of the underlying connection.
func (c *conn) CloseRead() error {
	if cr, ok := c.Conn.(interface{ CloseRead() error }); ok {
		return cr.CloseRead()
	}
	return errNotSupported
}

// ReadFrom copies r to the connection, with sendfile or splice where the
// underlying connection can.
func (c *conn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{c.Conn}, r)
}

// writerOnly hides every method but Write, so that io.Copy does not call
// ReadFrom again.
type writerOnly struct{ io.Writer }
