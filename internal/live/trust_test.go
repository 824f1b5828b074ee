package live

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/logtest"
	"github.com/rankwire/rankwire/internal/refusal"
	"github.com/rankwire/rankwire/subscriptions"
	"github.com/rankwire/rankwire/wire"
)

// closes returns how many connections the server closed with code.
func (e *env) closes(code wire.CloseCode) float64 {
	return testutil.ToFloat64(e.p.metrics.closes.WithLabelValues(code.String()))
}

// waitErrors waits until c has at least n error messages and returns them.
func waitErrors(t *testing.T, c *wsClient, n int) []wsMsg {
	t.Helper()
	checkFor(t, 10*time.Second, func() error {
		if got := len(c.Errors()); got < n {
			return fmt.Errorf("%d error messages, want %d", got, n)
		}
		return nil
	})
	return c.Errors()
}

// waitSnapshot waits for subscription id's first snapshot.
func waitSnapshot(t *testing.T, c *wsClient, id string) {
	t.Helper()
	checkFor(t, 5*time.Second, func() error {
		if _, ok := c.Rows(id); !ok {
			return fmt.Errorf("no snapshot for %s", id)
		}
		return nil
	})
}

// TestWSRefreshNarrows: a refresh token that no longer reaches a board
// ends that board's subscription with a forbidden error, after which it
// gets nothing more, while the subscription it still reaches keeps
// streaming diffs.
func TestWSRefreshNarrows(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("a", "slots-1", hub.Settings{})
	e.putBoard("a", "poker-1", hub.Settings{})
	c := e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
	c.Subscribe("s", "slots-1", map[string]any{"kind": "top"})
	c.Subscribe("p", "poker-1", map[string]any{"kind": "top"})
	waitSnapshot(t, c, "s")
	waitSnapshot(t, c, "p")

	c.Send(map[string]any{"type": "auth", "token": e.token("a", auth.RoleRead, "slots-*")})
	errs := waitErrors(t, c, 1)
	if len(errs) != 1 || errs[0].ID == nil || *errs[0].ID != "p" || errs[0].Code != "forbidden" || !strings.HasPrefix(errs[0].Message, "board: ") {
		t.Fatalf("errors after the narrowing refresh: %+v, want one forbidden for p naming board", errs)
	}
	// poker-1 changes first and is applied before slots-1 changes: a message
	// for p, were one sent, would come before s's diff.
	e.submit("a", "poker-1", hub.Item{Member: "x", Score: 100}) // returns once applied
	e.submit("a", "slots-1", hub.Item{Member: "y", Score: 7})
	checkFor(t, 5*time.Second, func() error {
		if rows, _ := c.Rows("s"); rows[1].Member != "y" {
			return fmt.Errorf("slots-1's diff not streamed: %v", rows)
		}
		return nil
	})
	after := false
	for _, m := range c.Messages() {
		if m.Type == "error" && m.ID != nil && *m.ID == "p" {
			after = true
		} else if after && m.ID != nil && *m.ID == "p" {
			t.Fatalf("p got %s after its forbidden error", m.Type)
		}
	}
	// The ended subscription is gone: its id may be used again, and the
	// narrowed token is refused the board.
	c.Subscribe("p", "poker-1", map[string]any{"kind": "top"})
	if errs := waitErrors(t, c, 2); errs[1].Code != "forbidden" {
		t.Fatalf("resubscribing outside the refreshed token: %+v, want forbidden", errs[1])
	}
}

// TestWSRefreshRefused: a refresh token of another tenant, or without the
// read role, closes 4003; one that does not verify is an error message and
// the connection keeps its token.
func TestWSRefreshRefused(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("a", "weekly", hub.Settings{})
	for name, tok := range map[string]string{
		"another tenant": e.token("b", auth.RoleRead),
		"no read role":   e.token("a", auth.RoleSubmit),
	} {
		c := e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
		c.Subscribe("s", "weekly", map[string]any{"kind": "top"})
		waitSnapshot(t, c, "s")
		c.Send(map[string]any{"type": "auth", "token": tok})
		if code := c.WaitClosed(5 * time.Second); code != wire.CloseForbidden {
			t.Fatalf("%s: closed with %d, want %d", name, code, wire.CloseForbidden)
		}
	}
	c := e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
	c.Send(map[string]any{"type": "auth", "token": "garbage"})
	if errs := waitErrors(t, c, 1); errs[0].Code != "unauthorized" {
		t.Fatalf("garbage refresh: %+v, want unauthorized", errs[0])
	}
	c.Subscribe("s", "weekly", map[string]any{"kind": "top"})
	waitSnapshot(t, c, "s")
}

// TestWSPromptReaderManyErrors: a client that reads promptly is never
// closed for the error replies it caused. 100 bad subscribes come in one
// write while the connection's socket is draining (as it is for a reader
// on a slow link): more replies than the outbox holds wait, the rest of
// the burst waits unread, and once the drain ends every reply and the
// valid subscription's snapshot arrive, with no close.
func TestWSPromptReaderManyErrors(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("a", "weekly", hub.Settings{})
	r, c, release := e.rawHeld()

	const bad = 100
	var burst []byte
	for i := range bad {
		msg := fmt.Sprintf(`{"type":"subscribe","id":"b%d","board":"weekly","view":{"kind":"top","limit":1000}}`, i)
		burst = appendClientFrame(burst, opText, []byte(msg))
	}
	burst = appendClientFrame(burst, opText, []byte(`{"type":"subscribe","id":"ok","board":"weekly","view":{"kind":"top"}}`))
	r.write(burst)
	checkFor(t, 5*time.Second, func() error {
		if n := c.out.Len(); n < subscriptions.DefaultMaxControl {
			return fmt.Errorf("%d replies wait, want the outbox full", n)
		}
		return nil
	})
	release() // the drain ends: it writes the backlog, then resumes

	for n := 0; n < bad; {
		op, p, err := r.frame()
		if err != nil {
			t.Fatalf("after %d replies: %v", n, err)
		}
		if op == opClose {
			t.Fatalf("closed after %d replies: %q", n, p)
		}
		if op != opText {
			continue
		}
		m := decode(t, p)
		if m.Code != "bad_request" || m.Message != "view.limit: 1000 is not in 1..100" {
			t.Fatalf("reply %d: %s, want bad_request naming view.limit", n, p)
		}
		n++
	}
	if _, p, err := r.frame(); err != nil || decode(t, p).Type != "snapshot" {
		t.Fatalf("after the errors: %q, %v; want the valid subscription's snapshot", p, err)
	}
	if n := e.closes(wire.CloseSlow); n != 0 {
		t.Fatalf("%v closes 4008, want none", n)
	}
}

// TestWSMessageRate: one message past the burst closes 4029 (a lowered
// limit); with the documented limit, a flood is closed 4029 too.
func TestWSMessageRate(t *testing.T) {
	const burst = 10
	logs := &logtest.Buffer{}
	e := newEnvLog(t, Options{}, slog.New(slog.NewJSONHandler(logs, nil)), func(p *Plane) { p.msgRate, p.msgBurst = 0, burst })
	tok := "access_token=" + e.token("a", auth.RoleRead)
	c := e.dial(tok, true, nil)
	for i := range burst {
		c.Send(fmt.Sprintf(`{"type":"unsubscribe","id":"n%d"}`, i))
	}
	waitErrors(t, c, burst)
	c.Send(`{"type":"unsubscribe","id":"one-past"}`)
	if code := c.WaitClosed(5 * time.Second); code != wire.CloseOverLimit {
		t.Fatalf("one past the burst closed with %d, want %d", code, wire.CloseOverLimit)
	}
	if n := len(c.Errors()); n != burst {
		t.Fatalf("%d replies, want %d: the message past the limit is not handled", n, burst)
	}
	checkFor(t, 5*time.Second, func() error {
		for _, l := range logs.Lines() {
			if l["reason"] == refusal.Rate && l["tenant"] == "casino-a" {
				return nil
			}
		}
		return fmt.Errorf("no message_rate refusal logged: %s", logs)
	})

	d := newEnv(t, Options{})
	f := d.dial("access_token="+d.token("a", auth.RoleRead), true, nil)
	sent := 0
	for ; sent < 10*wire.MessageBurst; sent++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := f.Conn().Write(ctx, websocket.MessageText, []byte(`{"type":"unsubscribe","id":"x"}`))
		cancel()
		if err != nil {
			break
		}
	}
	if code := f.WaitClosed(10 * time.Second); code != wire.CloseOverLimit {
		t.Fatalf("a flood of %d messages closed with %d, want %d", sent, code, wire.CloseOverLimit)
	}
	if d.closes(wire.CloseOverLimit) != 1 {
		t.Fatalf("closes 4029 counted %v, want 1", d.closes(wire.CloseOverLimit))
	}
}

// TestMsgBucket: the bucket gives burst at once, then rate a second.
func TestMsgBucket(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := newMsgBucket(50, 200, t0)
	for i := range 200 {
		if !b.take(t0) {
			t.Fatalf("message %d of the burst refused", i+1)
		}
	}
	if b.take(t0) {
		t.Fatal("one past the burst taken")
	}
	t1 := t0.Add(100 * time.Millisecond) // 5 more
	for i := range 5 {
		if !b.take(t1) {
			t.Fatalf("refilled message %d refused", i+1)
		}
	}
	if b.take(t1) {
		t.Fatal("one past the refill taken")
	}
	if !b.take(t1.Add(time.Hour)) || b.tokens != 199 {
		t.Fatalf("after an hour: %v tokens, want the burst less one", b.tokens)
	}
}

// TestWSInvalidUTF8: a text frame that is not valid UTF-8 closes 1007,
// never replaced; an escape that decodes to an unpaired surrogate is
// bad_request naming the field.
func TestWSInvalidUTF8(t *testing.T) {
	e := newEnv(t, Options{})
	tok := "access_token=" + e.token("a", auth.RoleRead)
	c := e.dial(tok, true, nil)
	c.Send(`{"type":"subscribe","id":"s\ud800","board":"weekly","view":{"kind":"top"}}`)
	c.Send(`{"type":"subscribe","id":"s1","board":"weekly","view":{"kind":"members","members":["ok","p\udfff"]}}`)
	errs := waitErrors(t, c, 2)
	for i, field := range []string{"id", "view.members[1]"} {
		if errs[i].Code != "bad_request" || !strings.HasPrefix(errs[i].Message, field+": not valid UTF-8") {
			t.Errorf("surrogate in %s: %+v, want bad_request naming it", field, errs[i])
		}
	}
	for _, frame := range []string{"{\"type\":\"unsubscribe\",\"id\":\"bad\xff\xfe\"}", "\xfe\xff"} {
		b := e.dial(tok, true, nil)
		b.Send(frame)
		if code := b.WaitClosed(5 * time.Second); code != wire.CloseInvalidText {
			t.Fatalf("%q closed with %d, want %d", frame, code, wire.CloseInvalidText)
		}
		if msgs := b.Messages(); len(msgs) != 0 {
			t.Fatalf("%q answered %+v before the close", frame, msgs)
		}
	}
}

// TestWSMessageSize: a message of 64 KiB is read; one byte more closes
// 1009. An id longer than an id may be is not echoed back.
func TestWSMessageSize(t *testing.T) {
	e := newEnv(t, Options{})
	tok := "access_token=" + e.token("a", auth.RoleRead)
	msg := func(size int) string {
		head, tail := `{"type":"unsubscribe","id":"n","pad":"`, `"}`
		return head + strings.Repeat("x", size-len(head)-len(tail)) + tail
	}
	c := e.dial(tok, true, nil)
	c.Send(msg(wire.MaxMessage))
	if errs := waitErrors(t, c, 1); errs[0].Code != "not_found" {
		t.Fatalf("a 64 KiB message: %+v, want not_found", errs[0])
	}
	c.Send(`{"type":"unsubscribe","id":"` + strings.Repeat("y", wire.MaxSubID+1) + `"}`)
	if errs := waitErrors(t, c, 2); errs[1].ID != nil {
		t.Fatalf("an over-long id echoed back: %d bytes", len(*errs[1].ID))
	}
	c.Send(msg(wire.MaxMessage + 1))
	if code := c.WaitClosed(5 * time.Second); code != wire.CloseTooBig {
		t.Fatalf("one byte over 64 KiB closed with %d, want %d", code, wire.CloseTooBig)
	}
	checkFor(t, 5*time.Second, func() error {
		if n := e.closes(wire.CloseTooBig); n != 1 {
			return fmt.Errorf("closes 1009 counted %v, want 1", n)
		}
		return nil
	})
}

// TestWSJoinErrorsNameFields: a board that does not exist and a window the
// board does not keep are refused naming board and window.
func TestWSJoinErrorsNameFields(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("a", "weekly", hub.Settings{})
	c := e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
	c.Subscribe("s", "nope", map[string]any{"kind": "top"})
	c.Send(`{"type":"subscribe","id":"t","board":"weekly","window":"day","view":{"kind":"top"}}`)
	errs := waitErrors(t, c, 2)
	if errs[0].Code != "not_found" || errs[0].Message != `board: "nope" does not exist` {
		t.Errorf("a missing board: %+v", errs[0])
	}
	if errs[1].Code != "bad_request" || !strings.HasPrefix(errs[1].Message, "window: ") {
		t.Errorf("a window not kept: %+v", errs[1])
	}
}
