package logtest

import (
	"log/slog"
	"sync"
	"testing"
)

// Lines reads back the JSON lines loggers wrote at once, and skips what is
// not one; Count counts across them.
func TestBuffer(t *testing.T) {
	var logs Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { slog.New(slog.NewJSONHandler(&logs, nil)).Info("hello", "reason", "token") })
	}
	wg.Wait()
	_, _ = logs.Write([]byte("not json\n"))
	lines := logs.Lines()
	if len(lines) != 8 || lines[7]["msg"] != "hello" || lines[7]["reason"] != "token" {
		t.Fatalf("lines %v of %q", lines, logs.String())
	}
	if n := logs.Count(`"msg":"hello"`); n != 8 {
		t.Fatalf("Count = %d, want 8", n)
	}
}
