// Package natstest starts a real nats-server with JetStream for tests: on
// a random loopback port, its store in the test's temp dir, shut down at
// the test's cleanup; or, in cluster.go, a cluster of embedded servers with
// the gateway's own options. Test helper: only tests import it. It may
// import the nats-io modules, internal/natsconf and internal/testport only
// (plus the standard library).
package natstest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Server starts a nats-server with JetStream, shut down at t's cleanup.
func Server(t testing.TB) *server.Server {
	t.Helper()
	return ServerIn(t, t.TempDir())
}

// ServerIn is Server with its store in dir: for tests that read the
// store's files.
func ServerIn(t testing.TB, dir string) *server.Server {
	t.Helper()
	return ServerWith(t, func(o *server.Options) { o.StoreDir = dir })
}

// ServerWith is Server with its options changed by tune before it starts:
// users and their permissions, a store limit, no JetStream. It waits up to
// a minute for the server to be ready (a loaded machine's start).
func ServerWith(t testing.TB, tune func(*server.Options)) *server.Server {
	t.Helper()
	o := &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true,
		StoreDir: t.TempDir(), NoSigs: true, NoLog: true}
	tune(o)
	s, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(time.Minute) {
		t.Fatal("nats-server not ready")
	}
	return s
}

// JetStream starts a Server and returns a connection to it, closed at
// t's cleanup, with its JetStream context.
func JetStream(t testing.TB) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	return Connect(t, Server(t))
}

// Connect connects to s with opts (credentials, say), closed at t's
// cleanup, with its JetStream context.
func Connect(t testing.TB, s *server.Server, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// StreamMsgs returns how many messages stream holds, asked through js
// within 20 s; an error fails t.
func StreamMsgs(t testing.TB, js jetstream.JetStream, stream string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}
