//go:build unix

package wsflow

import (
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"
)

// sysfd returns c's descriptor number.
func sysfd(t *testing.T, c net.Conn) uintptr {
	t.Helper()
	raw, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd uintptr
	if err := raw.Control(func(d uintptr) { fd = d }); err != nil {
		t.Fatal(err)
	}
	return fd
}

// TestSendAfterOutsideCloseFails: a socket closed behind the Conn's back
// (as the connection budget's eviction closes the net.Conn it holds) whose
// descriptor number the next accepted connection takes fails every later
// Send: not a byte reaches the newcomer's peer. The non-blocking write
// holds a reference on the descriptor (RawConn.Control), never a cached
// number.
func TestSendAfterOutsideCloseFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	clientA, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer clientA.Close()
	serverA, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	f := NewConn(serverA, time.Second)
	frame := AppendTextHeader(nil, 3)
	frame = append(frame, "abc"...)
	if err := f.Send(frame); err != nil {
		t.Fatalf("first send: %v", err)
	}
	fdA := sysfd(t, serverA)
	// The newcomer's client dials first, so that the accept after the close
	// is what takes the lowest free number: A's.
	clientB, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer clientB.Close()
	serverA.Close() // behind f's back
	serverB, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer serverB.Close()
	if got := sysfd(t, serverB); got != fdA {
		t.Logf("descriptor %d not reused (the newcomer got %d): the send is checked all the same", fdA, got)
	}
	if err := f.Send(frame); err == nil {
		t.Fatal("a send on a closed socket succeeded")
	}
	if !f.Busy() {
		t.Fatal("a failed send left the connection open to writers")
	}
	clientB.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	var buf [16]byte
	if n, err := clientB.Read(buf[:]); n > 0 {
		t.Fatalf("the newcomer's peer read %q", buf[:n])
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("the newcomer's peer: %v, want a read timeout", err)
	}
}

// TestSendRacesOutsideClose: sends on many connections race closes of
// their sockets from another goroutine while new connections are
// accepted (taking the freed numbers); each newcomer's peer then reads
// only what was sent to it. Run with -race.
func TestSendRacesOutsideClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const rounds = 50
	mine := AppendTextHeader(nil, 4)
	mine = append(mine, "mine"...)
	for range rounds {
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		server, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		f := NewConn(server, time.Second)
		var wg sync.WaitGroup
		wg.Go(func() {
			for range 20 {
				if f.Send([]byte("XXXXXX")) != nil {
					return
				}
			}
		})
		newClient, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		server.Close()
		newServer, err := ln.Accept() // most often server's number
		if err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		g := NewConn(newServer, time.Second)
		if err := g.Send(mine); err != nil {
			t.Fatal(err)
		}
		newClient.SetReadDeadline(time.Now().Add(5 * time.Second))
		got := make([]byte, len(mine))
		if _, err := io.ReadFull(newClient, got); err != nil {
			t.Fatal(err)
		}
		if string(got) != string(mine) {
			t.Fatalf("the newcomer's peer read %q, want %q", got, mine)
		}
		client.Close()
		newClient.Close()
		g.Close()
	}
}
