package hub

import (
	"errors"
	"testing"
	"time"
)

// TestAPIGate: a restart waits for the request inside, and a request that
// comes while the restart holds the gate, or waits for it, fails at once
// with ErrUnavailable instead of waiting.
func TestAPIGate(t *testing.T) {
	var g apiGate
	inside, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- g.do(func() error {
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	closed := make(chan func())
	go func() { closed <- g.close() }()
	select {
	case <-closed:
		t.Fatal("the gate closed with a request inside")
	case <-time.After(50 * time.Millisecond): // a bound on a negative: nothing to await
	}
	// The restart is waiting: a new request must not queue behind it.
	if err := g.do(func() error { t.Error("ran while a restart waited"); return nil }); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("request while a restart waits: %v, want ErrUnavailable", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	open := <-closed
	if _, err := gated(&g, func() (int, error) { return 1, nil }); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("request during the restart: %v, want ErrUnavailable", err)
	}
	open()
	if v, err := gated(&g, func() (int, error) { return 7, nil }); err != nil || v != 7 {
		t.Fatalf("after the restart: %d, %v", v, err)
	}
}
