// Package logtest is a log destination for tests that read back what the
// code under test logged: safe for the concurrent writes of its
// goroutines. Test helper: only tests import it; the standard library only.
package logtest

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
)

// Buffer is a log destination (a slog handler's writer, say) safe for
// concurrent writes and reads. The zero value is ready to use.
type Buffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns all written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Count returns how many times sub occurs in what was written so far.
func (s *Buffer) Count(sub string) int { return strings.Count(s.String(), sub) }

// Lines decodes the JSON lines written so far (a slog.JSONHandler's),
// skipping any that is not a JSON object.
func (s *Buffer) Lines() []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}
