// Package await is the tests' way to wait for a condition: poll it with a
// deadline instead of sleeping a guessed time. Standard library only.
package await

import (
	"testing"
	"time"
)

// For polls cond every 5 ms until it returns nil, and fails t with cond's
// last error if total passes first.
func For(t testing.TB, total time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(total)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %v: %v", total, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
