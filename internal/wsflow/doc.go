// Package wsflow is the WebSocket delivery plane's socket: a hijacked
// connection whose writes never block (Conn), the hijack that gives
// coder/websocket small buffers over it (Writer), and the framing of data
// messages written beside the library (AppendTextHeader).
//
// The gateway's writers send whole data frames, and its keep-alive wheel
// whole ping frames, through Conn.Send; a client that does not read within
// the slow timeout has its backlog drained by a goroutine of the
// connection's own, then is stalled, so a slow client never holds a
// writer. coder/websocket keeps the other control frames (pongs, close)
// and reading. That split relies on two behaviours of the library, pinned
// by the tests of this package against the real library: it writes each
// control frame whole, in one write, through the buffer the hijack gives
// it, and it sets no deadline on the socket.
//
// It imports the standard library only.
package wsflow
