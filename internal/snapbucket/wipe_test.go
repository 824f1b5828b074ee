package snapbucket

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/natstest"
)

// Wipe deletes every chunk of the object from the bucket's stream (secure
// delete); a tenant without an object is a no-op.
func TestWipe(t *testing.T) {
	_, js := natstest.JetStream(t)
	ctx := t.Context()
	b, err := Open(ctx, js, nil, 1, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	b.Save("a", 5, snapshotAt(t, 5))
	subject, ok := b.Chunks(ctx, "a")
	if !ok {
		t.Fatal("no chunks after Save")
	}
	s, err := js.Stream(ctx, "OBJ_"+Name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetLastMsgForSubject(ctx, subject); err != nil {
		t.Fatalf("chunk before Wipe: %v", err)
	}
	b.Wipe(js, "a")
	b.Wipe(js, "none")
	if _, err := s.GetLastMsgForSubject(ctx, subject); !errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Fatalf("chunk after Wipe: %v, want none", err)
	}
}
