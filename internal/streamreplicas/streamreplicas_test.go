package streamreplicas

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/natstest"
)

func open(request func() error) error { return request() }

// resizer returns a Resizer of the tenants' streams RW_a and RW_b (and a
// stream OTHER it must pass over) on a lone server, logging into a buffer.
func resizer(t *testing.T, want int) (Resizer, *bytes.Buffer) {
	t.Helper()
	_, js := natstest.JetStream(t)
	for _, name := range []string{"RW_a", "RW_b", "OTHER"} {
		if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: name, Subjects: []string{name}, Replicas: 1}); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	return Resizer{JS: js, Gate: open, Want: want, Log: slog.New(slog.NewTextHandler(&buf, nil)),
		Match: func(s string) bool { return strings.HasPrefix(s, "RW_") }}, &buf
}

// Streams at the count already are left alone, without a log line.
func TestApplyNothingToDo(t *testing.T) {
	z, buf := resizer(t, 1)
	if failed := z.Apply(t.Context()); len(failed) != 0 {
		t.Fatalf("failed %v", failed)
	}
	if buf.Len() != 0 {
		t.Errorf("logged: %s", buf)
	}
}

// A count the server cannot place (3 on one node) fails for the matched
// streams only, which Apply returns for Retry, and the streams keep theirs.
func TestApplyCannotPlace(t *testing.T) {
	z, buf := resizer(t, 3)
	failed := z.Apply(t.Context())
	slices.Sort(failed)
	if !slices.Equal(failed, []string{"RW_a", "RW_b"}) {
		t.Fatalf("failed %v, want the two tenant streams", failed)
	}
	if !strings.Contains(buf.String(), "could not change the stream's replicas yet") {
		t.Errorf("no warning logged: %s", buf)
	}
	s, err := z.JS.Stream(t.Context(), "RW_a")
	if err != nil || s.CachedInfo().Config.Replicas != 1 {
		t.Fatalf("RW_a: %v", err)
	}
}

// Retry stops when its context ends, however much is left.
func TestRetryStopsWithContext(t *testing.T) {
	z, _ := resizer(t, 3)
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() { z.Retry(ctx, []string{"RW_a"}); close(done) }()
	select {
	case <-done:
	case <-time.After(RetryFor):
		t.Fatal("Retry did not stop with its context")
	}
}

// A closed gate (the embedded JetStream restarting) fails every request:
// nothing is listed, nothing changed, and it is logged.
func TestApplyGateClosed(t *testing.T) {
	z, buf := resizer(t, 3)
	z.Gate = func(func() error) error { return errors.New("restarting") }
	if failed := z.Apply(t.Context()); len(failed) != 0 {
		t.Fatalf("failed %v, want none listed", failed)
	}
	if !strings.Contains(buf.String(), "listing streams") {
		t.Errorf("not logged: %s", buf)
	}
}
