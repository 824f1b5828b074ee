//go:build unix

package live

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkFanoutRaw is BenchmarkFanout with clients that cost next to
// nothing (docs/BENCHMARKS.md, "Shape 2: cost per message, fifth
// sitting"): each reads the server's frames off a plain TCP connection and
// finds the seq with a byte search, no WebSocket library and no JSON
// decoding, so that the plane's push path (the tick's offers, the writer
// pool, the write(2) with the loopback delivery it runs) is most of the
// process's CPU and a change to it shows in cpu-ns/msg. One view, n
// watchers, one submission taking the lead per op.
func BenchmarkFanoutRaw(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		b.Run(fmt.Sprintf("conns=%d", n), func(b *testing.B) { benchFanoutRaw(b, n) })
	}
}

func benchFanoutRaw(b *testing.B, n int) {
	h, p, url, tok := fanoutPlane(b)
	st := &fanState{n: int64(n), done: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	conns := make([]net.Conn, 0, n)
	b.Cleanup(func() {
		cancel()
		for _, c := range conns {
			c.Close()
		}
		wg.Wait()
	})
	addr, path, _ := strings.Cut(strings.TrimPrefix(url, "ws://"), "/")
	sub := appendClientFrame(nil, opText, []byte(`{"type":"subscribe","id":"s","board":"fan","view":{"kind":"top","limit":10}}`))
	for range n {
		c, br, err := rawUpgrade(addr, "/"+path+"?access_token="+tok)
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := c.Write(sub); err != nil {
			b.Fatal(err)
		}
		wg.Go(func() { st.readRaw(br) })
	}
	st.measure(b, ctx, h, p, "raw connections")
}

// rawUpgrade dials addr and upgrades the connection to a WebSocket at
// target, returning it with a reader of what follows the response.
func rawUpgrade(addr, target string) (net.Conn, *bufio.Reader, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, nil, err
	}
	req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", target, addr)
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, nil, err
	}
	br := bufio.NewReaderSize(c, 4096)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		c.Close()
		return nil, nil, fmt.Errorf("upgrade: status %d", resp.StatusCode)
	}
	return c, br, nil
}

// readRaw reads server frames from br until it fails, counting the
// connection once per op as read does; a frame's seq is found by a byte
// search for `"seq":` (the first one in a snapshot or diff is the view's).
func (st *fanState) readRaw(br *bufio.Reader) {
	var counted uint64
	var buf []byte
	var h [10]byte
	for {
		if _, err := io.ReadFull(br, h[:2]); err != nil {
			return
		}
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			if _, err := io.ReadFull(br, h[2:4]); err != nil {
				return
			}
			n = uint64(binary.BigEndian.Uint16(h[2:4]))
		case 127:
			if _, err := io.ReadFull(br, h[2:10]); err != nil {
				return
			}
			n = binary.BigEndian.Uint64(h[2:10])
		}
		if n > 1<<20 {
			return
		}
		buf = buf[:0]
		buf = append(buf, make([]byte, n)...)
		if _, err := io.ReadFull(br, buf); err != nil {
			return
		}
		if h[0]&0x0f != opText || bytes.Contains(buf, []byte(`"type":"heartbeat"`)) {
			continue
		}
		seq, ok := rawSeq(buf)
		if w := st.want.Load(); ok && w != 0 && seq >= w && counted != w {
			counted = w
			if st.seen.Add(1) == st.n {
				st.done <- struct{}{}
			}
		}
	}
}

// rawSeq returns the number after the first `"seq":` in msg.
func rawSeq(msg []byte) (uint64, bool) {
	i := bytes.Index(msg, []byte(`"seq":`))
	if i < 0 {
		return 0, false
	}
	rest := msg[i+len(`"seq":`):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	seq, err := strconv.ParseUint(string(rest[:j]), 10, 64)
	return seq, err == nil
}
