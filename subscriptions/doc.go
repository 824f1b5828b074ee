// Package subscriptions owns rankwire's live views: the views a client may
// watch over a board-window (top, around, rank, members), the tracking of
// which views a tick's changes touched, one recomputation, diff and JSON
// encoding per distinct view per tick (the bytes shared by every watcher),
// a bounded ring of recent changes per board-window for `since` resume, and
// the per-connection outboxes in which a subscription's pending messages
// are a bounded chain of diffs (MaxChain; past it one message of the newest
// state replaces them), never an unbounded queue.
//
// It imports board and the standard library only: it knows nothing of NATS,
// HTTP, WebSockets or tokens. The owner of the boards (hub, through api)
// hands it read access to one board-window at a time (Window) under that
// board's read lock, together with the changes applied since the last tick.
// Callers validate every Spec at the edge; this package assumes valid input.
//
// # Flow of one tick
//
// A tick is one drain of the owner's change feed: not a fixed period. The
// hub drains as soon as it is idle and coalesces only while it is busy
// (hub/feed.go), so ticks come as often as changes do, up to about one a
// millisecond; nothing here counts them as time (Config.IdleFor is a time).
//
//	Engine.Apply(key, w, changes)   per board-window, under the board's read lock:
//	    ring ← changes; dirty views ← rank-range index ∩ changed ranks, member index;
//	    recompute each dirty distinct view once; keep its diff.
//	Engine.Flush()                  once, with no board lock:
//	    encode each changed view's diff once; offer the shared bytes to every
//	    watcher's Outbox (chained on to what waits, up to MaxChain, else
//	    replacing it).
//
// # Concurrency
//
// Engine and Outbox are safe for concurrent use. Lock order: the board owner's
// read lock (held by the caller of Apply and Subscribe), then Engine.mu (the map of
// board-windows, briefly), then a board-window's own lock, then
// Outbox.mu. Apply and Flush must be called from one goroutine (the ticker).
//
// Leave is Unsubscribe for a closing connection: a crowd of them that close
// at once (a lobby's mass disconnect) hand their subscriptions to one of
// them, which removes them in batches, one acquisition of each
// board-window's lock per batch, instead of every goroutine queuing on that
// lock (leave.go). Each Leave still returns only once its subscriptions are
// gone.
package subscriptions
