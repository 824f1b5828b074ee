package hub

import "sync"

// elections tells a publish in flight that its stream elected a leader.
// A leader that steps down (a planned stop) or dies with a publish in
// flight never acknowledges it; without this signal the attempt waits out
// attemptTimeout before the retry that the new leader answers. Each tenant
// has a channel, closed at its stream's next election (the advisory,
// leader.go) and then replaced: an attempt takes the channel before it
// publishes, so an election during the attempt ends it at once, and its
// retry (the same message id: applied once) goes to the new leader. The
// zero value is ready to use.
type elections struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

// next returns the channel closed at tenant's next stream election.
func (e *elections) next(tenant string) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ch == nil {
		e.ch = make(map[string]chan struct{})
	}
	c, ok := e.ch[tenant]
	if !ok {
		c = make(chan struct{})
		e.ch[tenant] = c
	}
	return c
}

// elected closes tenant's channel: an election happened.
func (e *elections) elected(tenant string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.ch[tenant]; ok {
		close(c)
		delete(e.ch, tenant)
	}
}
