package wsflow

import (
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// TestSendToGonePeerRaisesNoSignal: sends to a peer that closed its end
// fail (a reset or a broken pipe) and the process gets no SIGPIPE: the
// write is a send(2) with MSG_NOSIGNAL, where a write(2) would have the
// kernel signal each time.
func TestSendToGonePeerRaisesNoSignal(t *testing.T) {
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, syscall.SIGPIPE)
	defer signal.Stop(sig)
	f, client := flowPair(t, time.Second)
	frame := append(AppendTextHeader(nil, 3), "abc"...)
	if err := f.Send(frame); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(client, make([]byte, len(frame))); err != nil { // unread bytes would make the close a reset
		t.Fatal(err)
	}
	// A FIN: the next write draws the peer's reset, and the one after it
	// finds the pipe broken (EPIPE, where write(2) also raises SIGPIPE).
	client.Close()
	await.For(t, 5*time.Second, func() error {
		if err := f.Send(frame); err == nil {
			return errStillOpen
		}
		return nil
	})
	if !f.Busy() {
		t.Fatal("a failed send left the connection open to writers")
	}
	select {
	case s := <-sig:
		t.Fatalf("the process got %v", s)
	case <-time.After(50 * time.Millisecond):
	}
}

var errStillOpen = errorString("the send to a gone peer still succeeds")

type errorString string

func (e errorString) Error() string { return string(e) }

// pipeConn is a net.Conn over one end of a pipe: a descriptor that is not
// a socket behind a net.Conn with a SyscallConn.
type pipeConn struct{ *os.File }

func (pipeConn) LocalAddr() net.Addr  { return nil }
func (pipeConn) RemoteAddr() net.Addr { return nil }

// TestSendOnPipe: a Conn whose descriptor is not a socket (send(2) answers
// ENOTSOCK) still writes, with write(2).
func TestSendOnPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f := NewConn(pipeConn{w}, time.Second)
	defer f.Close()
	frame := append(AppendTextHeader(nil, 3), "abc"...)
	if err := f.Send(frame); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(frame))
	r.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(r, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != string(frame) {
		t.Fatalf("read %q, want %q", got, frame)
	}
}
