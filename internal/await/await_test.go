package await

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestForWaitsUntilTrue(t *testing.T) {
	start := time.Now()
	For(t, 5*time.Second, func() error {
		if time.Since(start) < 30*time.Millisecond {
			return errors.New("not yet")
		}
		return nil
	})
	if time.Since(start) < 30*time.Millisecond {
		t.Fatal("For returned before the condition held")
	}
}

// recorder is a testing.TB that records Fatalf instead of stopping.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestForFailsAtTheDeadline(t *testing.T) {
	r := &recorder{TB: t}
	For(r, 20*time.Millisecond, func() error {
		if r.failed {
			return nil // Fatalf was called: let For return
		}
		return errors.New("never")
	})
	if !r.failed {
		t.Fatal("For did not fail on a condition that never held")
	}
}

func TestUntilReturnsTheLastError(t *testing.T) {
	n := 0
	err := Until(20*time.Millisecond, func() error { n++; return fmt.Errorf("look %d", n) })
	if err == nil || err.Error() != fmt.Sprintf("look %d", n) || n < 2 {
		t.Fatalf("Until: %v after %d looks", err, n)
	}
	if err := Until(time.Second, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
}
