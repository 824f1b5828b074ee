package hub

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// TestAPIGate: a restart waits for the request inside, and a request that
// comes while the restart holds the gate, or waits for it, fails at once
// with ErrUnavailable instead of waiting.
func TestAPIGate(t *testing.T) {
	var g apiGate
	inside, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	done := make(chan error, 1)
	go func() {
		done <- g.do(func() error {
			close(inside)
			<-release
			finished.Store(true)
			return nil
		})
	}()
	<-inside
	closed := make(chan bool, 1) // whether the request had finished when the gate closed
	var open func()
	go func() {
		open = g.close()
		closed <- finished.Load()
	}()
	// Once the restart waits, a new request must fail at once rather than
	// queue behind it.
	await.For(t, 5*time.Second, func() error {
		if err := g.do(func() error { return nil }); !errors.Is(err, ErrUnavailable) {
			return errors.New("the restart is not waiting yet")
		}
		return nil
	})
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !<-closed {
		t.Fatal("the gate closed with a request inside")
	}
	if _, err := gated(&g, func() (int, error) { return 1, nil }); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("request during the restart: %v, want ErrUnavailable", err)
	}
	open()
	if v, err := gated(&g, func() (int, error) { return 7, nil }); err != nil || v != 7 {
		t.Fatalf("after the restart: %d, %v", v, err)
	}
}
