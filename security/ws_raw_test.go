package security

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// rawWS is a WebSocket connection driven byte by byte, for frames a
// library client would not send, and for reading the gateway's close frame
// even when the gateway resets the connection right after it.
type rawWS struct {
	conn net.Conn
	r    *bufio.Reader
}

// dialRaw upgrades a plain TCP connection to /v1/ws with token as
// access_token, failing t unless the gateway answers 101.
func dialRaw(t testing.TB, token string) *rawWS {
	t.Helper()
	conn, err := net.DialTimeout("tcp", gw.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "GET /v1/ws?access_token=%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", url.QueryEscape(token), gw.addr)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("raw upgrade: %v %v", resp, err)
	}
	return &rawWS{conn: conn, r: r}
}

// writeText writes one masked text frame of payload. It reports the write
// error instead of failing: a gateway that refuses the frame part way may
// reset the connection before the client has written it all.
func (w *rawWS) writeText(payload []byte) error {
	head := []byte{0x81}
	switch n := len(payload); {
	case n < 126:
		head = append(head, 0x80|byte(n))
	case n < 1<<16:
		head = append(head, 0x80|126, byte(n>>8), byte(n))
	default:
		head = append(head, 0x80|127)
		head = binary.BigEndian.AppendUint64(head, uint64(n))
	}
	mask := make([]byte, 4)
	_, _ = rand.Read(mask)
	frame := append(append(head, mask...), payload...)
	for i := range payload {
		frame[len(head)+4+i] ^= mask[i%4]
	}
	_, err := w.conn.Write(frame)
	return err
}

// closeCode reads frames until the gateway's close frame and returns its
// code, or -1 where the connection ended without one.
func (w *rawWS) closeCode() int {
	for range 1000 {
		var h [2]byte
		if _, err := io.ReadFull(w.r, h[:]); err != nil {
			return -1
		}
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(w.r, b[:]); err != nil {
				return -1
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(w.r, b[:]); err != nil {
				return -1
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		if n > 1<<20 {
			return -1
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(w.r, payload); err != nil {
			return -1
		}
		if h[0]&0x0f == 0x8 && n >= 2 {
			return int(binary.BigEndian.Uint16(payload))
		}
	}
	return -1
}

// TestOversizeWebSocketMessage: a 70 KiB message (over the 64 KiB limit)
// is closed 1009, and the close frame reaches the client even when the
// client is still writing the rest of its message when the gateway gives
// up on it. A raw socket reads it: a library client shuts its connection
// on the failed write and would report no code.
func TestOversizeWebSocketMessage(t *testing.T) {
	for i := range 3 {
		w := dialRaw(t, tokA(t, base(tenantA, "read")))
		err := w.writeText([]byte(`{"type":"subscribe","id":"` + strings.Repeat("x", 70<<10) + `"}`))
		if got := w.closeCode(); got != 1009 {
			t.Errorf("try %d: a 70 KiB message: closed %d (write: %v), want 1009", i, got, err)
		}
	}
}
