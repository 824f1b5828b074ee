// Package client is the Go SDK of rankwire: typed calls for the HTTP API
// and Watch, a live view that follows a board over WebSocket, reconnecting
// and resuming (since) across a list of gateways.
//
//	c, err := client.New([]string{"https://rank-1.example.com", "https://rank-2.example.com"}, client.WithToken(token))
//	res, err := c.Submit(ctx, "weekly", client.Score{Member: "p42", Score: 4500, ID: "round-7"})
//	for state, err := range c.Watch(ctx, "weekly", client.Top(10)) { ... }
//
// Every call answers the gateway's error as an *Error (errors.As), with the
// HTTP status, the protocol's code and the message naming the field. The
// protocol is docs/PROTOCOL.md; its bodies and messages are package wire's
// types, which Row, Page, Score, View and the others name here.
//
// # Failover
//
// Give New every gateway of a deployment. A call starts at the gateway that
// answered the Client last and moves to the next one where an attempt gets
// no answer it can use, for as long as its budget lasts: the caller's ctx,
// or 30 s where ctx has no deadline (WithRetryBudget). Each attempt has its
// own deadline, 2 s for a read and 3 s for a write (WithAttemptTimeouts),
// so that a gateway that hangs (a paused process, a partition) costs one
// attempt, not the whole budget; it doubles after each attempt of the call
// that ran out of time (up to 8 times), so that a cluster slow everywhere
// (a leader election) answers rather than has the write abandoned on every
// gateway in turn. A read, a PUT or a submission whose items all have ids
// is not cancelled at its deadline: it runs one deadline more while the
// next gateway is tried, and the first success answers, so a gateway only
// slow (waiting for an election) is not abandoned for a paused one. After
// a full round over the gateways the
// call waits briefly (50 ms doubling to 1 s, jittered) and goes round
// again.
//
// The deadline bounds the whole attempt: the dial (a handshake that hangs),
// TLS, sending the request, the wait for the answer's headers and the read
// of its whole body (one that stalls or trickles), on a new connection or a
// kept-alive one; when it passes, the request is cancelled, which over
// HTTP/1.1 closes its connection, so a stalled one is not used again. Over
// HTTP/2 only the request's stream is reset, and the default transport
// pings a connection on which nothing arrived, closing it where no answer
// comes (DeadConnection, 4 s); a transport of your own (WithHTTPClient)
// wants the same. The Client's http.Client timeout need not be shorter.
// A repeatable request past its deadline (above) ends at twice the
// deadline at the latest, or as soon as another attempt of the call
// answers. A request that never got a connection (refused, or a dial the
// deadline ended) is known not to have left, and moves on like a refused
// one; a transport of your own that does not report its connections
// through net/http/httptrace (GetConn, GotConn) is believed only on a
// refused dial, so a write it failed is not sent again.
//
// A gateway whose attempt failed (no answer within the deadline, a refused
// or broken connection, a 503) is tried last by the Client's calls for
// FailurePenalty (5 s), or until it answers: a call that must move on goes
// first to the gateways not seen failing, and the next call does not start
// at a gateway that just timed out, though none answered since. It is
// still tried, last, and where every gateway failed the list's order holds.
//
// What is sent again, and why that is safe:
//
//   - Reads (GET) and PUTs (PutBoard, PutProfile), after a 503, a refused
//     or failed connection, or the attempt's deadline: a read changes
//     nothing, and a PUT sets a state that setting twice leaves the same.
//   - Submit, after the same: each score carries an idempotency id, the
//     caller's or one the SDK gives it before the first attempt ("sdk-" and
//     130 random bits), and the board applies an id once, on every node,
//     answering a repeat with the original result (docs/PROTOCOL.md,
//     "Submissions"). So a submission whose answer was lost, or that a
//     gateway stored before it answered 503, is not applied twice. The
//     gateways keep each id (about 185 bytes per node, for ever unless
//     --idempotency-retention, at least an hour, far longer than any call's
//     budget); WithoutGeneratedIDs leaves scores without ids as they are,
//     and such a Submit is then retried as the other writes are.
//   - Every other write (Reset, DeleteBoard, RemoveMember, Approve, Reject,
//     Link) only where it surely did not arrive: a refused connection. A
//     503 or a timeout is the caller's answer, because the write may have
//     been applied and a repeat may not be harmless (a reset repeated after
//     other writes would erase them).
//   - Any call answered 429 with a Retry-After header (from a proxy in
//     front; the gateway sends none today), after that wait when it fits in
//     the budget: the request was refused before it was handled.
//
// Never sent again: every other 4xx (the same request gets the same
// answer), a 429 without Retry-After (a tenant's limit, such as its number
// of boards, not a rate), other 5xx. WithMaxAttempts caps the attempts (1:
// none is sent again). When the budget runs out the error wraps both the
// context's error and the last attempt's (errors.Is and errors.As find
// each).
//
// Watch pings its gateway three times per read timeout (WatchReadTimeout,
// 5 s) and leaves a connection on which nothing arrived within it, neither
// a message nor a pong: it resumes on the next gateway with since, so its
// states go on without a gap. The time the caller takes over a state does
// not count: nothing is read meanwhile. It ignores message types it does not know,
// as the protocol asks, and any message keeps a connection alive. It also
// leaves a gateway whose heartbeat says stale (its replica trails past its
// bound, or it was paused), and one whose heartbeat says it cannot take the
// tenant's writes, unless every gateway of the list has just said so, in
// which case it stays (PROTOCOL.md, "Heartbeats"). With one gateway it
// stays.
package client
