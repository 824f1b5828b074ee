package catchup

import (
	"context"
	"sync"
)

// probes shares each tenant's question to its stream among the reads that
// ask at once. A read joins the question not sent yet (next) and never the
// one on the wire (sent), which may have been answered before the read's
// board was created: so every answer a read gets was given after it asked.
// At most one question per tenant is on the wire; a burst of N reads costs
// at most two. The zero value is ready.
type probes struct {
	mu sync.Mutex        // guards t and every queue's fields
	t  map[string]*queue // tenants with a question on the wire or waiting to go
}

// queue is one tenant's questions.
type queue struct {
	sent *probe // on the wire, or nil
	next *probe // goes out once sent is answered; joinable, or nil
}

// probe is one question and, once done is closed, its answer.
type probe struct {
	done    chan struct{}
	readers int // reads sharing it, guarded by probes.mu: the tests' view
	last    uint64
	err     error
}

// last returns tenant's stream's last sequence as ask answers it, asked
// after this call began; ctx bounds the wait, and ask gets a context that
// keeps ctx's deadline but not its cancellation, since other reads share
// the answer.
func (ps *probes) last(ctx context.Context, tenant string, ask func(context.Context, string) (uint64, error)) (uint64, error) {
	ps.mu.Lock()
	if ps.t == nil {
		ps.t = map[string]*queue{}
	}
	q := ps.t[tenant]
	if q == nil {
		q = &queue{}
		ps.t[tenant] = q
	}
	p, lead := q.next, false
	if p == nil {
		p, lead = &probe{done: make(chan struct{})}, true
		q.next = p
	}
	p.readers++
	prev := q.sent
	ps.mu.Unlock()
	if lead {
		ps.send(ctx, tenant, q, p, prev, ask)
	}
	select {
	case <-p.done:
		return p.last, p.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// send waits for prev, the question on the wire (whose own deadline bounds
// it), then puts p on the wire and records its answer. It runs on the
// goroutine of the read that made p.
func (ps *probes) send(ctx context.Context, tenant string, q *queue, p, prev *probe, ask func(context.Context, string) (uint64, error)) {
	if prev != nil {
		<-prev.done
	}
	ps.mu.Lock()
	q.sent, q.next = p, nil
	ps.mu.Unlock()
	actx := context.WithoutCancel(ctx)
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		actx, cancel = context.WithDeadline(actx, d)
		defer cancel()
	}
	p.last, p.err = ask(actx, tenant)
	ps.mu.Lock()
	q.sent = nil
	if q.next == nil && ps.t[tenant] == q {
		delete(ps.t, tenant)
	}
	ps.mu.Unlock()
	close(p.done)
}
