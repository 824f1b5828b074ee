package subscriptions

import "strconv"

// A deleted board's live views end. Where a board is deleted, every
// subscription of every watched window of it (any kind, held resumes too)
// gets one last message, an error its owner encodes (EndBoard's msg), and
// is unsubscribed: never left watching a board that no longer is, whose
// views a board made again under the name would continue (a diff whose
// prev is the old board's seq, applied by the client on top of the old
// rows). A reset is no delete: its views go on from the emptied board.
//
// A board deleted and made again within one tick comes as one batch that
// says Deleted, with a Window of the new board: the subscriptions made
// since the new board (their view's gen is its Window.Gen) are the new
// board's and go on; the older ones end. A subscription never outlives its
// board's generation, whatever the order of the tick and the subscribe.
// Views are per generation too (viewKey): one who subscribes to the new
// board before the tick that ends the old one's views is never shown the
// old board's rows from a view they share.

// EndBoard ends every subscription of tenant's board, over any of its
// watched windows, whose board generation is not gen (the board's
// Window.Gen now: zero where it was deleted and not made again). Each gets
// msg as its last message, "error" typed, after its id: the JSON that
// follows `{"type":"error","id":"…",`, ending with `}`. Its owner learns
// of the end from Ended. It returns how many ended. Call it from the
// ticker goroutine before the deleted board's Apply, under the tenant's
// read lock. O(watched board-windows + the board's subscriptions).
func (e *Engine) EndBoard(tenant, board string, gen uint64, msg []byte) int {
	e.mu.RLock()
	var wss []*windowState
	for k, ws := range e.windows {
		if k.Tenant == tenant && k.Board == board {
			wss = append(wss, ws)
		}
	}
	e.mu.RUnlock()
	end := &shared{typ: "error", body: msg, final: true}
	n := 0
	for _, ws := range wss {
		n += e.endWindow(ws, gen, end)
	}
	return n
}

// endWindow ends ws's subscriptions of a board generation other than gen
// with end. O(ws's subscriptions).
func (e *Engine) endWindow(ws *windowState, gen uint64, end *shared) int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.gone {
		return 0
	}
	var ending []*Sub
	for _, v := range ws.views {
		if v.gen != gen { // a view is of one generation (viewKey): its watchers end together
			ending = append(ending, v.watchers...)
		}
	}
	for _, s := range ending {
		e.detachLocked(s)
		s.ended.Store(true)
		s.out.end(s, end)
	}
	return len(ending)
}

// Ended reports whether the engine ended s (EndBoard): its owner forgets
// it. O(1), no lock.
func (s *Sub) Ended() bool { return s.ended.Load() }

// viewKey is a view's key in its board-window's map: its spec's and its
// board's generation's, so that the views of a board made again under the
// name (within one tick of the delete) never share the deleted board's.
func viewKey(spec Spec, gen uint64) string {
	return spec.key() + "@" + strconv.FormatUint(gen, 10)
}
