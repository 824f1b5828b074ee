package live

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/wire"
)

// rawWS is a WebSocket client that writes and reads frames itself, over
// a plain TCP connection: it can send a burst of frames in one write and
// see every byte the server sends, which coder/websocket's client hides.
type rawWS struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

// rawDial sends an upgrade request for /v1/ws?query with the extra
// headers and returns the client and the response's status.
func (e *env) rawDial(query string, header http.Header) (*rawWS, int) {
	e.t.Helper()
	addr := strings.TrimPrefix(e.srv.URL, "http://")
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var req strings.Builder
	fmt.Fprintf(&req, "GET /v1/ws?%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n", query, addr)
	fmt.Fprintf(&req, "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n")
	for k, vs := range header {
		for _, v := range vs {
			fmt.Fprintf(&req, "%s: %s\r\n", k, v)
		}
	}
	req.WriteString("\r\n")
	if _, err := io.WriteString(conn, req.String()); err != nil {
		e.t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return &rawWS{t: e.t, conn: conn, br: br}, resp.StatusCode
}

// appendClientFrame appends one masked, unfragmented client frame.
func appendClientFrame(dst []byte, opcode byte, payload []byte) []byte {
	dst = append(dst, 0x80|opcode)
	switch n := len(payload); {
	case n <= 125:
		dst = append(dst, 0x80|byte(n))
	case n <= 0xffff:
		dst = append(dst, 0x80|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	default:
		dst = append(dst, 0x80|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	mask := [4]byte{1, 2, 3, 4}
	dst = append(dst, mask[:]...)
	for i, b := range payload {
		dst = append(dst, b^mask[i%4])
	}
	return dst
}

// write sends frames, already framed, in one write.
func (r *rawWS) write(frames []byte) {
	r.t.Helper()
	if _, err := r.conn.Write(frames); err != nil {
		r.t.Fatal(err)
	}
}

// frame reads one server frame: its opcode and payload.
func (r *rawWS) frame() (byte, []byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(r.br, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(r.br, b[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(r.br, b[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if n > 1<<20 {
		return 0, nil, fmt.Errorf("frame of %d bytes", n)
	}
	p := make([]byte, n)
	_, err := io.ReadFull(r.br, p)
	return h[0] & 0x0f, p, err
}

const (
	opText  = 1
	opClose = 8
	opPing  = 9
)

// closeFrame reads frames up to the close frame and returns its code and
// reason, failing if a data frame comes first.
func (r *rawWS) closeFrame() (wire.CloseCode, string) {
	r.t.Helper()
	for {
		op, p, err := r.frame()
		if err != nil {
			r.t.Fatalf("no close frame: %v", err)
		}
		switch op {
		case opClose:
			if len(p) < 2 {
				r.t.Fatalf("close frame of %d bytes", len(p))
			}
			return wire.CloseCode(binary.BigEndian.Uint16(p)), string(p[2:])
		case opPing:
			continue
		default:
			r.t.Fatalf("a data frame (opcode %d) before the close: %q", op, p)
		}
	}
}

// rawHeld dials a raw connection with a read token of casino-a, the env's
// only connection, and holds its socket as a drain under way does: the
// writers give the connection nothing until release. It returns the
// client's end, the plane's connection and release.
func (e *env) rawHeld() (r *rawWS, c *wsConn, release func()) {
	e.t.Helper()
	r, status := e.rawDial("access_token="+e.token("a", auth.RoleRead), nil)
	if status != http.StatusSwitchingProtocols {
		e.t.Fatalf("upgrade answered %d", status)
	}
	checkFor(e.t, 5*time.Second, func() error {
		for _, lc := range e.p.connections() {
			c = lc.(*wsConn)
			return nil
		}
		return fmt.Errorf("no connection yet")
	})
	return r, c, c.flow.Hold()
}
