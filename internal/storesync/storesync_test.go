package storesync

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// layout writes a store under dir as nats-server v2.15.2 lays it out: one
// account, stream S with a block.
func layout(t *testing.T, dir string) string {
	t.Helper()
	msgs := filepath.Join(dir, "jetstream", "$G", "streams", "S", "msgs")
	if err := os.MkdirAll(msgs, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"meta.inf": filepath.Join(msgs, "..", "meta.inf"), "1.blk": filepath.Join(msgs, "1.blk")} {
		if err := os.WriteFile(path, []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return msgs
}

func run(t *testing.T, s *Syncer) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// Await returns once a round that began after the note completed; a
// sequence already covered needs no round; a new block is synced in the
// next round (its size is new).
func TestAwaitCoversWhatWasNoted(t *testing.T) {
	dir := t.TempDir()
	msgs := layout(t, dir)
	s := New(dir, nil)
	run(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.Note("S", 5)
	if err := s.Await(ctx, "S", 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Await(ctx, "S", 5); err != nil {
		t.Fatal(err)
	}
	n := s.Rounds()
	if n < 1 {
		t.Fatalf("covered after %d rounds", n)
	}
	if err := s.Await(ctx, "S", 4); err != nil || s.Rounds() != n {
		t.Fatalf("a covered sequence: %v, rounds %d then %d", err, n, s.Rounds())
	}
	if err := os.WriteFile(filepath.Join(msgs, "2.blk"), []byte("more"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Await(ctx, "S", 6); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.files[filepath.Join(msgs, "2.blk")]; !ok {
		t.Errorf("the new block was not synced: %v", s.files)
	}
}

// A store without the layout is still covered (every file under it
// fsynced), and a waiter whose context ends gets its error, not a cover.
func TestFallbackAndContext(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "jetstream", "$G", "streams", "S", "other"), 0o700); err != nil {
		t.Fatal(err)
	}
	s := New(dir, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Await(ctx, "S", 1); !errors.Is(err, context.Canceled) { // Run not started: no round
		t.Fatalf("without a round: %v", err)
	}
	run(t, s)
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Await(ctx, "S", 1); err != nil {
		t.Fatal(err)
	}
	if !s.fellBack {
		t.Error("no fallback for a stream without msgs/")
	}
	var nilSyncer *Syncer
	nilSyncer.Note("S", 1)
	if err := nilSyncer.Await(ctx, "S", 1); err != nil {
		t.Errorf("a nil Syncer: %v", err)
	}
}

func TestSupported(t *testing.T) {
	if !Supported("2.15.2") || Supported("2.16.0") {
		t.Error("Supported")
	}
}

// With nothing noted, Run still looks every Idle: a stream nobody awaits
// (the notifications') is synced within it.
func TestIdleRound(t *testing.T) {
	dir := t.TempDir()
	layout(t, dir)
	s := New(dir, nil)
	run(t, s)
	await.For(t, 10*Idle, func() error {
		if s.Rounds() == 0 {
			return errors.New("no idle round yet")
		}
		return nil
	})
}
