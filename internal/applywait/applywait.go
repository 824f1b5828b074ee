// Package applywait is one replica's waiters: the calls that published an
// event and wait for its apply (a Flight, found by the event's waiter key),
// and the calls that wait until the replica has applied its stream up to
// a sequence (Wait: a write's read-your-writes at open, a read that found
// nothing and waits for this node to catch up, internal/catchup). The
// replica's goroutine reports every apply to its Set (Applied); each
// waiter is woken once, by the apply that reaches what it waits for,
// never by polling.
//
// Costs: Applied is one lock, one map lookup and one look at the lowest
// sequence waited for, plus O(log W) for each of the W sequence waiters it
// wakes; so an apply nobody waits for costs what it cost before, and a
// burst of waiters costs O(W log W) in all whatever the number of applies
// (not O(applies × W), as a broadcast to every waiter on every apply
// would). No goroutine is started: a waiter blocks in its own caller's
// goroutine on a channel of its own. At most MaxWaiters sequence waiters
// wait on one Set; past it Wait fails at once with ErrTooMany, and a
// waiter whose context ends leaves the Set at once.
//
// It imports the standard library only; the hub owns one Set per replica.
package applywait

import (
	"container/heap"
	"context"
	"errors"
	"sync"
)

// MaxWaiters is the most calls that may Wait on one Set at once: a
// tenant's reads catching up are bounded in time (internal/catchup) and
// in number here, so a burst of them neither grows memory without bound
// nor makes an apply wake an unbounded number of them.
const MaxWaiters = 4096

// Errors of Wait.
var (
	// ErrTooMany: MaxWaiters calls wait already.
	ErrTooMany = errors.New("applywait: too many calls wait for this replica")
	// ErrStopped: the replica stopped before it applied the sequence.
	ErrStopped = errors.New("applywait: the replica stopped")
)

// Flight is a published event awaiting its apply: Done is closed once Out
// is set. Any number of goroutines may wait on it.
type Flight[T any] struct {
	done chan struct{}
	out  T
}

// Done is closed when the event has been applied.
func (f *Flight[T]) Done() <-chan struct{} { return f.done }

// Out is what the apply gave. Read it only after Done is closed.
func (f *Flight[T]) Out() T { return f.out }

// Set is one replica's waiters. Its zero value is ready, at sequence 0.
// Safe for concurrent use; Applied is called by one goroutine, the
// replica's, in increasing sequence.
type Set[T any] struct {
	mu      sync.Mutex // guards the fields below; a leaf: no other lock is taken under it
	at      uint64     // the last sequence reported applied
	flights map[string]*Flight[T]
	seqs    waitHeap // sequence waiters, lowest sequence first
	woken   uint64   // sequence waiters woken by Applied since the start: Stats
}

// Expect registers a Flight for the event published with key. It
// completes once, when Applied reports key; Forget unregisters it (an
// acknowledged event is always applied, so only a failed publish needs
// Forget). O(1).
func (s *Set[T]) Expect(key string) *Flight[T] {
	f := &Flight[T]{done: make(chan struct{})}
	s.mu.Lock()
	if s.flights == nil {
		s.flights = make(map[string]*Flight[T])
	}
	s.flights[key] = f
	s.mu.Unlock()
	return f
}

// Forget unregisters the Flight of key, if any. O(1).
func (s *Set[T]) Forget(key string) {
	s.mu.Lock()
	delete(s.flights, key)
	s.mu.Unlock()
}

// Applied records that the replica applied seq, which was the event
// published with key ("" for none, or an event nobody here published):
// the Flight of key gets out, and every Wait for seq or less returns.
// A seq at or below the last one reported changes nothing but the Flight.
// Called by the replica's goroutine after each apply.
func (s *Set[T]) Applied(seq uint64, key string, out T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.flights[key]; f != nil && key != "" {
		f.out = out
		close(f.done)
		delete(s.flights, key)
	}
	s.at = max(s.at, seq)
	for len(s.seqs) > 0 && s.seqs[0].seq <= s.at {
		w := heap.Pop(&s.seqs).(*waiter)
		close(w.ch)
		s.woken++
	}
}

// Wait blocks until seq has been applied, ctx ends (its error) or stop is
// closed (ErrStopped; nil never closes). It returns at once where seq is
// applied already, and fails at once with ErrTooMany where MaxWaiters
// calls wait. O(log W) to enter and to leave early; no polling.
func (s *Set[T]) Wait(ctx context.Context, seq uint64, stop <-chan struct{}) error {
	s.mu.Lock()
	if s.at >= seq {
		s.mu.Unlock()
		return nil
	}
	if len(s.seqs) >= MaxWaiters {
		s.mu.Unlock()
		return ErrTooMany
	}
	w := &waiter{seq: seq, ch: make(chan struct{})}
	heap.Push(&s.seqs, w)
	s.mu.Unlock()
	var err error
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-stop:
		err = ErrStopped
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.i < 0 { // woken meanwhile: the sequence is applied after all
		return nil
	}
	heap.Remove(&s.seqs, w.i)
	return err
}

// Stats is what a Set holds and has done.
type Stats struct {
	Applied uint64 // the last sequence reported applied
	Waiting int    // calls in Wait now
	Woken   uint64 // calls in Wait that an apply woke, since the start (each at most once)
}

// Stats returns the Set's Stats. O(1), under the Set's lock.
func (s *Set[T]) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Applied: s.at, Waiting: len(s.seqs), Woken: s.woken}
}

// waiter is one call in Wait: ch is closed when seq is applied; i is its
// index in the heap, -1 once it left it.
type waiter struct {
	seq uint64
	ch  chan struct{}
	i   int
}

// waitHeap is a min-heap of waiters by sequence (container/heap), each
// knowing its index so that one that gives up leaves in O(log W).
type waitHeap []*waiter

func (h waitHeap) Len() int           { return len(h) }
func (h waitHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h waitHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].i, h[j].i = i, j
}

func (h *waitHeap) Push(x any) {
	w := x.(*waiter)
	w.i = len(*h)
	*h = append(*h, w)
}

func (h *waitHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	w.i = -1
	return w
}
