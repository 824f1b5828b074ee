package jsread

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/natstest"
)

// stream starts a nats-server with JetStream on loopback and returns a
// stream holding n messages, "m1" to "mn".
func stream(t *testing.T, n int) jetstream.Stream {
	t.Helper()
	_, js := natstest.JetStream(t)
	ctx := t.Context()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if _, err := js.Publish(ctx, "s", fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func TestRead(t *testing.T) {
	st := stream(t, 5)
	ctx := t.Context()
	var got []string
	collect := func(stop uint64) func(jetstream.Msg, *jetstream.MsgMetadata) (bool, error) {
		got = nil
		return func(m jetstream.Msg, md *jetstream.MsgMetadata) (bool, error) {
			got = append(got, fmt.Sprintf("%d:%s", md.Sequence.Stream, m.Data()))
			return md.Sequence.Stream >= stop, nil
		}
	}
	// Done at seq 3, in batches of 2: three messages, in order, no error.
	if err := Read(ctx, st, Options{Batch: 2}, collect(3)); err != nil || fmt.Sprint(got) != "[1:m1 2:m2 3:m3]" {
		t.Fatalf("to seq 3: %v, %v", got, err)
	}
	// Never done: every message, then ErrEnded after one empty fetch.
	err := Read(ctx, st, Options{MaxWait: 100 * time.Millisecond}, collect(99))
	if !errors.Is(err, ErrEnded) || len(got) != 5 {
		t.Fatalf("to the end: %d messages, %v; want 5, ErrEnded", len(got), err)
	}
	// fn's error comes back as is, at once.
	boom := errors.New("boom")
	calls := 0
	err = Read(ctx, st, Options{}, func(jetstream.Msg, *jetstream.MsgMetadata) (bool, error) { calls++; return false, boom })
	if err != boom || calls != 1 {
		t.Fatalf("fn failing: %v after %d calls, want boom after 1", err, calls)
	}
	// A consumer that starts past the end finds nothing: ErrEnded.
	o := Options{MaxWait: 100 * time.Millisecond, Consumer: jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: 6}}
	if err := Read(ctx, st, o, collect(99)); !errors.Is(err, ErrEnded) || len(got) != 0 {
		t.Fatalf("past the end: %v, %v", got, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := Read(cctx, st, Options{}, collect(99)); err == nil {
		t.Fatal("a read under an ended context succeeded")
	}
}
