package live

import (
	"encoding/json"

	"github.com/rankwire/rankwire/wire"
)

// A deleted board's live views end with a not_found error naming it
// (PROTOCOL.md, "When a board is deleted"): the engine ends them as the
// delete's batch comes (subscriptions/gone.go), with the bytes built here;
// a WebSocket forgets an ended subscription once the writer sent its error
// (forgetEnded), so that an idle connection holds no view of the deleted
// board; an event stream ends after the error's event (sse.go).

// deletedError is the error of a view whose board was deleted.
func deletedError(board string) *Error {
	return notFound("board: %q was deleted", truncate(board))
}

// endBoard ends the live views of tenant's board but those of its
// generation gen (a board made again under its name within the tick), and
// counts them. On the feed goroutine, under the tenant's read lock.
func (p *Plane) endBoard(tenant, board string, gen uint64) {
	e := deletedError(board)
	// What follows the id in the error message: {"type":"error","id":…,
	// then this, as encodeError writes it.
	b, _ := json.Marshal(struct {
		Code    wire.Code `json:"code"`
		Message string    `json:"message"`
	}{e.Code, e.Message}) // strings only: cannot fail
	if n := p.eng.EndBoard(tenant, board, gen, b[1:]); n > 0 {
		p.log.Debug("live views of a deleted board ended", "tenant", tenant, "board", board, "views", n)
	}
}

// gone reports whether the engine ended v's subscription (its board was
// deleted): its connection forgets it.
func (v *liveView) gone() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.sub != nil && v.sub.Ended()
}

// forgetEnded forgets the subscriptions the engine ended, on the writer's
// turn that sent an end: their views (the deleted board's rows and
// history) and their follow entries are released at once, not when the
// client next subscribes. No lock is held on the writer's turn; c.mu is
// held only briefly by its other takers (never while waiting for a writer),
// so the turn does not wait on a client.
func (c *wsConn) forgetEnded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pruneLocked()
}

// pruneLocked forgets the subscriptions the engine ended, so that their
// ids and slots are free again; each one's error is in the outbox already.
// c.mu is held (taken before a view's: see follow.go's lock order).
func (c *wsConn) pruneLocked() {
	for i := 0; i < len(c.subs); {
		if !c.subs[i].view.gone() {
			i++
			continue
		}
		v := c.subs[i].view
		c.subs.remove(c.subs[i].id)
		c.p.leave(v) // unfollows it and stops a resume's timer; the engine's part is done
	}
}
