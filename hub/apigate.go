package hub

import "sync"

// apiGate keeps the Hub's own JetStream API requests out of a restart of
// the embedded JetStream (by the disk watch: internal/diskwatch).
//
// Why: nats-server's EnableJetStream replaces the API's request queues
// without a lock, while the API subscription of the JetStream it replaced
// still dispatches requests that arrive. A request of ours that reaches the
// server during a restart is a data race inside nats-server (the race
// detector found it: TestJetStreamDisabledRecovers). So every JetStream API
// request the Hub makes (stream and consumer management, stream info, the
// snapshot bucket) passes through the gate; a restart closes it, waits for
// the requests inside, and flushes the connection so that the server has
// read every request sent before (it reads a connection in order).
// Publishes and pulls of messages are not API requests and do not pass.
//
// The gate never blocks a request: while a restart holds it, or waits to,
// a request fails at once with ErrUnavailable, which callers already retry.
// A request holds the gate's read lock across its NATS round trip (bounded
// by the request's context), so a restart waits for the slowest request
// in flight.
type apiGate struct{ mu sync.RWMutex }

// do runs f, one API request, unless a restart holds the gate.
func (g *apiGate) do(f func() error) error {
	if !g.mu.TryRLock() {
		return errorf(ErrUnavailable, "JetStream is restarting")
	}
	defer g.mu.RUnlock()
	return f()
}

// gated runs f, one API request returning a value, through g.
func gated[T any](g *apiGate, f func() (T, error)) (T, error) {
	var v T
	err := g.do(func() error {
		var err error
		v, err = f()
		return err
	})
	return v, err
}

// close waits for the requests inside to end and keeps new ones out until
// the returned function opens the gate again.
func (g *apiGate) close() (open func()) {
	g.mu.Lock()
	return g.mu.Unlock
}

// JetStreamAPI runs request, one JetStream API request of a package that
// uses the Hub's connection (package webhook), so that it keeps out of a
// restart of the embedded JetStream like the Hub's own; while one is under
// way it fails at once with ErrUnavailable.
func (h *Hub) JetStreamAPI(request func() error) error { return h.api.do(request) }
