// Package streamwatch hears of the JetStream streams created in a NATS
// account: it subscribes to JetStream's stream-created advisory, which
// the account's JetStream publishes on every node of a cluster, so that a
// gateway hears of a tenant created through another one within a round
// trip (hub's discovery opens it then, and polls only as a fallback).
// Leaders hears of the streams' leader elections and quorum losses,
// which a clustered JetStream announces likewise (hub counts and logs them).
//
// It may import the nats-io modules only (plus the standard library).
package streamwatch

import (
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
)

// createdSubject is the subject of JetStream's advisory that a stream was
// created in the account; its last token is the stream's name.
const createdSubject = "$JS.EVENT.ADVISORY.STREAM.CREATED."

// MaxNames bounds the names announced and not yet taken: past it an
// announcement only wakes the taker, whose own listing of the streams
// finds the rest.
const MaxNames = 1024

// Watch reports the streams created since it started whose names have
// its prefix. Safe for concurrent use: the subscription adds, Take takes.
// The zero Watch hears nothing and its Close does nothing.
type Watch struct {
	// Wake receives (capacity 1, never blocking the subscription) when a
	// name was announced: one pending wake is enough, as Take returns them
	// all.
	Wake <-chan struct{}

	stop  func()
	mu    sync.Mutex // guards names
	names map[string]struct{}
}

// New subscribes to the advisories of streams named prefix+name for which
// keep(name) holds, and flushes, so that every such stream created after
// it returns is announced. Where that fails (no permission for
// advisories) it returns the error with a Watch that may never wake.
func New(nc *nats.Conn, prefix string, keep func(name string) bool) (*Watch, error) {
	wake := make(chan struct{}, 1)
	w := &Watch{Wake: wake, stop: func() {}, names: make(map[string]struct{})}
	// "*" matches a whole subject token only: every stream's advisory
	// arrives here, and the handler keeps the prefix's.
	sub, err := nc.Subscribe(createdSubject+"*", func(m *nats.Msg) {
		if name, ok := strings.CutPrefix(strings.TrimPrefix(m.Subject, createdSubject), prefix); ok && keep(name) {
			w.add(name)
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	})
	if err == nil {
		err = nc.Flush()
	}
	if sub != nil {
		w.stop = func() { _ = sub.Unsubscribe() }
	}
	return w, err
}

func (w *Watch) add(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.names) < MaxNames {
		w.names[name] = struct{}{}
	}
}

// Take returns the names announced since the last Take, and forgets them.
func (w *Watch) Take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.names))
	for n := range w.names {
		out = append(out, n)
	}
	clear(w.names)
	return out
}

// Close ends the subscription.
func (w *Watch) Close() {
	if w != nil && w.stop != nil {
		w.stop()
	}
}
