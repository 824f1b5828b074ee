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
	if err := Until(total, cond); err != nil {
		t.Fatalf("condition not met after %v: %v", total, err)
	}
}

// Until polls cond every 5 ms until it returns nil, and returns cond's
// last error if total passes first: for a wait whose timeout the caller
// tolerates (it logs, or takes another way).
func Until(total time.Duration, cond func() error) error {
	deadline := time.Now().Add(total)
	for {
		err := cond()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}
