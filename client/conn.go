package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/coder/websocket"

	"github.com/rankwire/rankwire/wire"
)

// Conn is one live-view connection with its raw messages: for programs
// that hold many subscriptions on a connection and decode the messages
// themselves (load generators, bridges to other systems). Watch is the
// simpler way to follow one view. Not safe for concurrent reads.
type Conn struct {
	ws  *websocket.Conn
	buf []byte // the last message read; reused
}

// DialOptions tune Dial.
type DialOptions struct {
	// HTTPClient dials (a source address, a proxy, TLS); nil: the
	// Client's, without its timeout.
	HTTPClient *http.Client
	// Timeout bounds the dial, the upgrade and the auth message; 0: 30 s.
	Timeout time.Duration
}

// readKeep is the largest read buffer a Conn keeps between messages.
const readKeep = 64 << 10

// Dial opens a live-view connection to the gateway at base (one of the
// Client's URLs, or any other) and authenticates it with the Client's token
// (the first message, not the URL, which ends up in logs).
func (c *Client) Dial(ctx context.Context, base string, o DialOptions) (*Conn, error) {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	hc := o.HTTPClient
	if hc == nil {
		h := *c.http
		h.Timeout = 0 // the dial is bounded below; the connection lives on
		hc = &h
	}
	dctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	tok, err := c.token(dctx)
	if err != nil {
		return nil, fmt.Errorf("client: token: %w", err)
	}
	ws, _, err := websocket.Dial(dctx, wsURL(base), &websocket.DialOptions{HTTPClient: hc, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(1 << 20)
	conn := &Conn{ws: ws}
	if err := conn.send(dctx, wire.Auth{Type: wire.TypeAuth, Token: tok}); err != nil {
		ws.CloseNow()
		return nil, err
	}
	return conn, nil
}

// Subscribe starts a live view named id on the connection; since, where
// not 0, asks for a diff from that seq (a resume) rather than a snapshot.
// window is "" (all), day, week or month.
func (c *Conn) Subscribe(ctx context.Context, id, board, window string, v View, since uint64) error {
	return c.send(ctx, subscribeMsg(id, board, window, v, since))
}

// subscribeMsg is Subscribe's message.
func subscribeMsg(id, board, window string, v View, since uint64) wire.Subscribe {
	m := wire.Subscribe{Type: wire.TypeSubscribe, ID: id, Board: board, Window: window, View: v}
	if since > 0 {
		m.Since = &since
	}
	return m
}

// Follow starts a live view named id of board's current window of kind
// window (day, week or month) that follows the window across turnovers
// (PROTOCOL.md, "Following the current window"): at the board's local
// midnight the view's next message is the new window's snapshot, under
// the same id, and its seq starts over with the new window's.
func (c *Conn) Follow(ctx context.Context, id, board, window string, v View) error {
	return c.send(ctx, followMsg(id, board, window, v))
}

// followMsg is Follow's message: the gateway ignores since when following.
func followMsg(id, board, window string, v View) wire.Subscribe {
	m := subscribeMsg(id, board, window, v, 0)
	m.Follow = true
	return m
}

// Unsubscribe ends the view named id.
func (c *Conn) Unsubscribe(ctx context.Context, id string) error {
	return c.send(ctx, wire.Unsubscribe{Type: wire.TypeUnsubscribe, ID: id})
}

func (c *Conn) send(ctx context.Context, m any) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("client: encode: %w", err)
	}
	return c.ws.Write(ctx, websocket.MessageText, raw)
}

// ReadRaw returns the next message's JSON text. The buffer is reused: the
// result is valid until the next ReadRaw, and a message costs no
// allocation once the buffer has grown. A connection the gateway closed
// answers an error whose close code CloseCode reads.
func (c *Conn) ReadRaw(ctx context.Context) ([]byte, error) {
	_, r, err := c.ws.Reader(ctx)
	if err != nil {
		return nil, err
	}
	b := c.buf[:0]
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, max(cap(b), 1024)) // doubling, from 1 KiB
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if c.buf = b; cap(b) > readKeep {
		c.buf = nil
	}
	return b, nil
}

// Ping sends a ping and waits for its pong, which a concurrent ReadRaw
// reads: a sign that the gateway is there and answering.
func (c *Conn) Ping(ctx context.Context) error { return c.ws.Ping(ctx) }

// Close ends the connection with a close handshake (code 1000).
func (c *Conn) Close(reason string) error { return c.ws.Close(websocket.StatusNormalClosure, reason) }

// CloseNow ends the connection at once, without a handshake.
func (c *Conn) CloseNow() error { return c.ws.CloseNow() }

// CloseCode returns the close code of an error a Conn returned, or -1
// where the connection did not end with a close frame.
func CloseCode(err error) int { return int(websocket.CloseStatus(err)) }
