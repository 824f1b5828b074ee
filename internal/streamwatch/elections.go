package streamwatch

import (
	"context"
	"sync"
)

// Elections tells a publish in flight that its stream elected a leader.
// A leader that steps down (a planned stop) or dies with a publish in
// flight never acknowledges it; without this signal the attempt waits out
// its whole timeout before the retry that the new leader answers. Each
// stream has a channel, closed at its next election (fed from the
// leader-elected advisory, Leaders) and then replaced: an attempt takes
// the channel before it publishes, so an election during the attempt ends
// it at once, and its retry (with the same message id, so applied once)
// reaches the new leader. The zero value is ready to use; safe for
// concurrent use.
type Elections struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

// Next returns the channel closed at name's next election.
func (e *Elections) Next(name string) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ch == nil {
		e.ch = make(map[string]chan struct{})
	}
	c, ok := e.ch[name]
	if !ok {
		c = make(chan struct{})
		e.ch[name] = c
	}
	return c
}

// Elected closes name's channel: its stream elected a leader.
func (e *Elections) Elected(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.ch[name]; ok {
		close(c)
		delete(e.ch, name)
	}
}

// EndAtElection calls end if elected closes before ctx ends or stop is
// called. stop waits for its goroutine, so none outlives the attempt.
func EndAtElection(ctx context.Context, elected <-chan struct{}, end func()) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-elected:
			end()
		case <-ctx.Done():
		case <-quit:
		}
	}()
	return func() { close(quit); <-done }
}

// Held reports whether elected (a channel of Next) has closed: the stream
// elected a leader since it was taken, so it exists and has one to ask.
func Held(elected <-chan struct{}) bool {
	select {
	case <-elected:
		return true
	default:
		return false
	}
}
