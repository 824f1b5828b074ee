package diskwatch

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/internal/natstest"
)

// A disk below LowDisk is full (one log line, however many looks); with
// twice that again the watch restarts JetStream, holding the owner's
// requests out and flushing first, and the disk has room again. A
// JetStream that NATS turned off is started again.
func TestCheckRestarts(t *testing.T) {
	s := natstest.Server(t)
	var logs bytes.Buffer
	var held, released, flushed int
	cfg := Config{Server: s, Dir: t.TempDir(), Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Hold:  func() func() { held++; return func() { released++ } },
		Flush: func() error { flushed++; return nil }}
	js := s.JetStreamConfig()
	var w Watch
	w.check(LowDisk-1, cfg, js)
	w.check(LowDisk-1, cfg, js)
	if !w.Full() || strings.Count(logs.String(), "is full") != 1 {
		t.Fatalf("full %v, logs:\n%s", w.Full(), logs.String())
	}
	w.check(2*LowDisk-1, cfg, js) // not yet room enough: still full, no restart
	if !w.Full() || held != 0 {
		t.Fatalf("full %v after %d restarts below twice LowDisk", w.Full(), held)
	}
	w.check(2*LowDisk, cfg, js)
	if w.Full() || w.Restarting() || !s.JetStreamEnabled() || held != 1 || released != 1 || flushed != 1 {
		t.Fatalf("after room again: full %v, restarting %v, enabled %v, held %d, released %d, flushed %d",
			w.Full(), w.Restarting(), s.JetStreamEnabled(), held, released, flushed)
	}
	if err := s.DisableJetStream(); err != nil {
		t.Fatal(err)
	}
	w.check(2*LowDisk, cfg, js)
	if !s.JetStreamEnabled() || held != 2 {
		t.Fatalf("a disabled JetStream: enabled %v after %d restarts", s.JetStreamEnabled(), held)
	}
}
