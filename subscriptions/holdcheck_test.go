package subscriptions

import "fmt"

// checkHolds reports the first broken invariant of e's held lists (see
// hold.go), or nil: O(board-windows + their watchers), under
// each board-window's lock in turn, so call it while nothing subscribes.
func (e *Engine) checkHolds() error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	n := 0
	for k, ws := range e.windows {
		ws.mu.Lock()
		err := ws.checkHolds()
		n += len(ws.held)
		ws.mu.Unlock()
		if err != nil {
			return fmt.Errorf("board-window %v: %w", k, err)
		}
	}
	if c := e.held.Load(); c != int64(n) {
		return fmt.Errorf("%d held counted, %d in the held lists", c, n)
	}
	return nil
}

// checkHolds is checkHolds of one board-window; ws's lock is held.
func (ws *windowState) checkHolds() error {
	for i, h := range ws.held {
		switch s := h.s; {
		case s.hidx != i:
			return fmt.Errorf("hold %d (%q) indexed at %d", i, s.id, s.hidx)
		case s.seq != heldSeq:
			return fmt.Errorf("hold %d (%q) at seq %d, not held", i, s.id, s.seq)
		case s.v.ws != ws || s.widx < 0:
			return fmt.Errorf("hold %d (%q) is no watcher of this board-window", i, s.id)
		case h.since <= ws.at:
			return fmt.Errorf("hold %d (%q) waits for %d, reached (at %d)", i, s.id, h.since, ws.at)
		}
	}
	held := 0
	for _, v := range ws.views {
		for _, s := range v.watchers {
			if s.seq == heldSeq {
				held++
			}
		}
	}
	if held != len(ws.held) {
		return fmt.Errorf("%d watchers held, %d holds", held, len(ws.held))
	}
	return nil
}
