package client_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/client"
)

// untracedRT is a transport of the caller's own that calls no httptrace
// hook (it forwards elsewhere, or speaks another protocol): every request
// it takes may have reached the gateway before the error it reports.
type untracedRT struct{ calls atomic.Int64 }

func (rt *untracedRT) RoundTrip(*http.Request) (*http.Response, error) {
	rt.calls.Add(1)
	return nil, errors.New("connection reset by peer")
}

// A write that may not be sent again (a reset), whose transport reported a
// failure without tracing its connection, is not taken for one that never
// left: it is sent once, and the error is the answer.
func TestUntracedTransportErrorIsNotANeverSentRequest(t *testing.T) {
	rt := &untracedRT{}
	c, err := client.New([]string{"http://a.invalid", "http://b.invalid"}, client.WithToken("x"),
		client.WithMaxAttempts(4), client.WithHTTPClient(&http.Client{Transport: rt}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Reset(ctx, "s"); err == nil {
		t.Fatal("the reset was answered")
	}
	if n := rt.calls.Load(); n != 1 {
		t.Fatalf("the reset was sent %d times, want once: a transport's error without a trace may follow a sent request", n)
	}
}

// A program that replaced http.DefaultTransport with a transport of
// another type (instrumentation, a test double) keeps it: the SDK's
// default is then that transport, not a panic at init.
func TestDefaultTransportOfAnotherType(t *testing.T) {
	rt := &untracedRT{}
	if got := client.PingingTransport(rt); got != http.RoundTripper(rt) {
		t.Fatalf("got %T, want the program's own transport", got)
	}
	tr, ok := client.PingingTransport(http.DefaultTransport).(*http.Transport)
	if !ok || tr == http.DefaultTransport || tr.HTTP2 == nil || tr.HTTP2.SendPingTimeout != client.DeadConnection/2 {
		t.Fatalf("from net/http's default: %#v, want a copy with the pings", tr)
	}
}
