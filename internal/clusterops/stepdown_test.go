package clusterops

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A server outside a cluster leads no replicated stream: StepDown hands
// nothing over and asks nothing of it. (The handover itself is tested
// with three gateway processes: cmd/gateway TestPlannedLeaderStop.)
func TestStepDownAloneHandsNothing(t *testing.T) {
	s, err := server.NewServer(&server.Options{Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}}); err != nil {
		t.Fatal(err)
	}
	led, err := Led(ctx, js, s.Name())
	if err != nil || len(led) != 0 {
		t.Fatalf("Led: %v, %v; want none", led, err)
	}
	handoffs, err := StepDown(ctx, js, s.Name())
	if err != nil || len(handoffs) != 0 {
		t.Fatalf("StepDown: %v, %v; want nothing handed over", handoffs, err)
	}
}
