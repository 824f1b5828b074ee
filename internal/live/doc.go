// Package live is rankwire's WebSocket delivery plane (PROTOCOL.md, "Live
// views over WebSocket"): the /v1/ws handler (Plane.ServeHTTP, which api
// mounts), its Server-Sent Events fallback at /v1/stream (Plane.ServeStream,
// sse.go: one view per hijacked HTTP/1.1 stream, another poolConn and
// liveConn beside wsConn on the same engine, outboxes and writers), each connection's session (auth by access_token or a first auth
// message, refresh that may only narrow, expiry, origins, the message rate,
// close codes), the consumer of the hub's change feed (Plane.Feed, which
// the plane's owner wires: hub.SetFeed), the writer pool that writes every
// connection's outbox, and the heartbeat that tells every connection, each
// interval, how this gateway stands for its tenant (heartbeat.go). Views,
// diffs and outboxes are package subscriptions'; the socket that never
// blocks a writer is internal/wsflow's.
//
// A push goes hub → feed (Apply under the tenant's read lock, Flush with no
// lock) → subscriptions.Engine → each watcher's Outbox → the writer pool →
// wsflow.Conn, never through api.
//
// It imports wire (the protocol's messages, close codes, limits and
// defaults, written once there), subscriptions, internal/wsflow, internal/connguard,
// internal/refusal, auth, identity and internal/names (to validate what a
// client sends, at the edge), hub (a join reads its board-window under the
// tenant's read lock, hub.ReadWindow, and the plane is a hub.Feed),
// coder/websocket and prometheus. Nothing imports it but api,
// internal/gwtest and cmd/gateway; it must not import api.
//
// # Locks
//
// Every mutex of the plane, its owner and what it guards:
//
//   - wsConn.mu (one per connection): its scope, authed, expiry timer and
//     subscriptions.
//   - sseConn.sendMu (one per stream): orders its writes and the close
//     event; a leaf but for Outbox.mu (close closes the outbox under it)
//     and wsflow.Conn.mu. sseConn.timerMu: its timers, a leaf.
//   - Plane.mu: the open connections, the per-tenant counts, closing, the
//     follow goroutine's channels.
//   - wheel.mu (the ping wheel's and the heartbeat wheel's, keepalive.go):
//     its slots, every member's place in them, its goroutine's channels. A
//     leaf: track takes it under Plane.mu; a visit runs without it.
//   - liveView.mu (one per subscription): the engine's Sub it holds, which
//     a following subscription's move replaces (follow.go), and the timer
//     bounding a held resume (resume.go; its callback takes liveView.mu,
//     then the engine's, then wsConn.mu alone).
//   - Plane.followMu: the following subscriptions by board and kind; a leaf.
//   - writerPool.mu (with its sync.Cond): the queue of connections to write.
//   - wsConn.closeOnce: held by the first close while coder/websocket runs
//     the close handshake; a second close waits for it.
//   - subscriptions' own, in their order: Engine.mu (the map of
//     board-windows), a board-window's mu (its views and ring), Outbox.mu.
//   - wsflow.Conn.mu (the socket's backlog), refusal.Log.mu and
//     connguard's Guard.mu: leaves, taken with nothing below them.
//
// The order, outermost first; a lock is only ever taken while holding locks
// before it:
//
//	hub's tenant read lock (ReadWindow in a join, Feed.Apply, a follow poll)
//	  → wsConn.mu → Plane.mu → liveView.mu → Engine.mu → board-window mu → Outbox.mu → writerPool.mu
//	wsConn.closeOnce → wsflow.Conn.mu (the close handshake's writes)
//	leaves: wheel.mu, wsflow.Conn.mu, refusal.Log.mu, connguard's, Plane.followMu
//
// Where the nesting happens: a connection's cleanup holds wsConn.mu while
// it ends its subscriptions (Plane.leaveAll: each liveView.mu, then
// Engine.Leave, which may end other closing connections' too, taking each
// board-window's mu once per batch, then Outbox.mu) and closes its outbox;
// untrack, with no lock held, forgets the connection and gives back its
// tenant's slot under one acquisition of Plane.mu (Leave may wait, holding
// wsConn.mu, for another connection's goroutine to drain its batch: the
// drainer takes only the engine's locks, never a plane lock); track holds
// Plane.mu while it starts the writers (writerPool.mu); an Outbox calls its
// notify (writerPool.schedule, writerPool.mu) after releasing Outbox.mu,
// with the board-window's mu still held by the engine; setScopeLocked
// (auth, refresh) marks the socket busy (connguard's lock) under wsConn.mu. The
// hub's tenant read lock is never taken with a plane lock held, and a join
// holds no connection lock while it reads (subscribe takes wsConn.mu
// before and after, not across). Closes and pings run with no lock held.
// A writer takes a connection's outbox (Outbox.mu) and writes its socket
// (wsflow.Conn.mu) one after the other, never nested. A writer's turn
// that sent a subscription's end then takes wsConn.mu, holding nothing
// (forgetEnded, gone.go). Functions that expect
// a lock held end in Locked (setScopeLocked: wsConn.mu).
package live
