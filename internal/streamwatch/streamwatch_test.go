package streamwatch

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/natstest"
)

// Streams created after New are announced once each, those with the
// prefix and kept only; Take forgets what it returns; Close stops it.
func TestWatch(t *testing.T) {
	nc, js := natstest.JetStream(t)
	create := func(name string) {
		t.Helper()
		if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: name, Subjects: []string{"s." + name}}); err != nil {
			t.Fatal(err)
		}
	}
	create("RW_before")
	w, err := New(nc, "RW_", func(name string) bool { return name != "skip" })
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"RW_a", "OTHER", "RW_skip", "RW_b"} {
		create(name)
	}
	var got []string
	await.For(t, 5*time.Second, func() error {
		select {
		case <-w.Wake:
			got = append(got, w.Take()...)
		case <-time.After(10 * time.Millisecond):
		}
		if slices.Sort(got); fmt.Sprint(got) != "[a b]" {
			return fmt.Errorf("announced %v, want [a b]", got)
		}
		return nil
	})
	if more := w.Take(); len(more) != 0 {
		t.Fatalf("Take after Take: %v", more)
	}
	w.Close()
	create("RW_late")
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if late := w.Take(); len(late) != 0 {
		t.Fatalf("announced after Close: %v", late)
	}
	var zero Watch
	zero.Close()
}
