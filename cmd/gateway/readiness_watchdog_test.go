package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/gwtest"
	"github.com/rankwire/rankwire/internal/natstest"
	"github.com/rankwire/rankwire/internal/readiness"
)

// A node that takes no writes, whose replica's consumer goes silent while
// it still beats (paused: JetStream's consumer pause keeps the heartbeats
// and delivers nothing), applies what another node wrote once its
// readiness prober has seen the stream ahead: the prober tells the
// replica's watchdog the stream's last sequence, and the watchdog replaces
// the silent consumer. Without it the replica stays behind for as long as
// the consumer is paused (an hour here).
func TestProberWakesASilentReplica(t *testing.T) {
	s := natstest.Server(t)
	_, js := natstest.Connect(t, s)
	keys, err := auth.ParseKeys(fmt.Appendf(nil, `{"tenants":{"t1":{"keys":[{"kid":"k1","alg":"HS256","secret":%q}]}}}`,
		base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{'c'}, 32))))
	if err != nil {
		t.Fatal(err)
	}
	writer := gwtest.Start(t, gwtest.Options{Keys: keys, NATSURL: s.ClientURL(), ReplicaID: "w"})
	idle := gwtest.Start(t, gwtest.Options{Keys: keys, NATSURL: s.ClientURL(), ReplicaID: "i"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := writer.Hub.PutBoard(ctx, "t1", "first", hub.Settings{}); err != nil {
		t.Fatal(err)
	}
	applied := func(want uint64) func() error {
		return func() error {
			if got := idle.Hub.Beat("t1").Applied; got < want {
				return fmt.Errorf("the idle node applied %d of %d", got, want)
			}
			return nil
		}
	}
	await.For(t, 20*time.Second, applied(writer.Hub.Beat("t1").Applied))

	stream := hub.StreamOf("t1")
	paused := 0
	st, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	names := st.ConsumerNames(ctx)
	for name := range names.Name() {
		if strings.HasPrefix(name, "rw_i_t1_") {
			if _, err := js.PauseConsumer(ctx, stream, name, time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			paused++
		}
	}
	if names.Err() != nil || paused != 1 {
		t.Fatalf("paused %d consumers of the idle node's replica (%v), want 1", paused, names.Err())
	}
	if _, err := writer.Hub.PutBoard(ctx, "t1", "late", hub.Settings{}); err != nil {
		t.Fatal(err)
	}
	last := writer.Hub.Beat("t1").Applied
	if got := idle.Hub.Beat("t1").Applied; got >= last {
		t.Fatalf("the idle node applied %d past its paused consumer", got)
	}

	p := &prober{h: idle.Hub, m: readiness.New(readiness.Config{}), log: slog.New(slog.DiscardHandler)}
	stop := p.start()
	defer stop()
	start := time.Now()
	await.For(t, 15*time.Second, applied(last))
	t.Logf("the idle node applied the late board %v after its prober started", time.Since(start).Round(time.Millisecond))
}
