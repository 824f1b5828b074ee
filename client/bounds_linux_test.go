package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/client"
)

// fullBacklog returns the URL of a loopback listener that never accepts
// and whose accept queue (a backlog of 0: one connection) is full, so the
// kernel drops the SYN of every further connection: a dial to it waits in
// the TCP handshake, as one to a host that vanished behind a partition does.
func fullBacklog(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	filler, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("the connection that fills the queue: %v", err)
	}
	t.Cleanup(func() { filler.Close() })
	if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
		c.Close()
		t.Skip("the kernel completed a handshake past a full accept queue")
	}
	return "http://" + addr
}

// A dial that hangs in the handshake is bounded by the attempt's deadline
// too, and, the request never having left, any call moves on from it (a
// reset included), answered by the next gateway within the deadline plus
// a little.
func TestDialThatHangsEndsAtTheDeadline(t *testing.T) {
	down := fullBacklog(t)
	for _, k := range calls {
		t.Run(k.name, func(t *testing.T) {
			c, err := client.New([]string{down}, client.WithToken("x"), client.WithMaxAttempts(1), client.WithAttemptTimeouts(attempt, attempt))
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			err = k.call(context.Background(), c)
			if el := time.Since(t0); !errors.Is(err, context.DeadlineExceeded) || el > attempt+slack {
				t.Errorf("the call answered %v after %v, want the attempt's deadline within %v + %v", err, el, attempt, slack)
			}
		})
	}
	g := startGateway(t)
	ctx := context.Background()
	if _, err := g.client(t, "t1", "k1", auth.RoleAdmin).PutBoard(ctx, "s", client.Settings{Policy: "sum"}); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, g, down, g.URL())
	t0 := time.Now()
	if err := c.Reset(ctx, "s"); err != nil || time.Since(t0) > attempt+slack {
		t.Fatalf("a reset past a gateway whose handshake hangs: %v after %v, want it answered by the next", err, time.Since(t0))
	}
}
