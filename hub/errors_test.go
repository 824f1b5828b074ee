package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestErrorClasses: a hub error matches its own class with errors.Is and no
// other, carries its Code through errors.As, and keeps its cause for logs
// only.
func TestErrorClasses(t *testing.T) {
	cause := fmt.Errorf("publish to RW_t1: %w", context.DeadlineExceeded)
	tests := []struct {
		name  string
		err   error
		class *Error
		code  Code
		msg   string
	}{
		{"bad request", errorf(ErrBadRequest, "scores[%d].score: not a finite number", 7), ErrBadRequest, CodeBadRequest, "scores[7].score: not a finite number"},
		{"not found", errorf(ErrNotFound, "board %q", "b"), ErrNotFound, CodeNotFound, `board "b"`},
		{"conflict", errorf(ErrConflict, "order"), ErrConflict, CodeConflict, "order"},
		{"forbidden", errorf(ErrForbidden, "aliases[0]: %q names another member", "x"), ErrForbidden, CodeForbidden, `aliases[0]: "x" names another member`},
		{"unavailable", unavailable(logUnavailable, cause), ErrUnavailable, CodeUnavailable, "the tenant's log is unavailable"},
		{"closed", ErrClosed, ErrClosed, CodeUnavailable, "closed"},
		{"wrapped the older way", fmt.Errorf("%w: board %q", ErrNotFound, "b"), ErrNotFound, CodeNotFound, "not found"},
		{"wrapped again", fmt.Errorf("list: %w", errorf(ErrBadRequest, "limit")), ErrBadRequest, CodeBadRequest, "limit"},
	}
	all := []*Error{ErrBadRequest, ErrForbidden, ErrNotFound, ErrConflict, ErrUnavailable, ErrClosed, ErrInternal}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range all {
				if got := errors.Is(tt.err, c); got != (c == tt.class) {
					t.Errorf("errors.Is(%v, %v) = %v", tt.err, c, got)
				}
			}
			var he *Error
			if !errors.As(tt.err, &he) || he.Code != tt.code || he.Msg != tt.msg {
				t.Fatalf("errors.As: %+v, want code %s msg %q", he, tt.code, tt.msg)
			}
		})
	}
	full := fmt.Errorf("submit: %w", storeFull("10 of 8 bytes used"))
	if !errors.Is(full, ErrStoreFull) || !errors.Is(full, ErrUnavailable) || !errors.Is(ErrStoreFull, ErrUnavailable) || errors.Is(full, ErrClosed) {
		t.Errorf("store full is not of classes ErrStoreFull and ErrUnavailable alone: %v", full)
	}
	if errors.Is(ErrUnavailable, ErrStoreFull) {
		t.Error("every unavailable error counts as a full store")
	}
	err := unavailable(logUnavailable, cause)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "RW_t1") {
		t.Errorf("the cause is lost for logs: %v", err)
	}
}

// TestUnavailableNamesNoStream: a tenant whose stream is gone answers
// ErrUnavailable with a message that names no stream or subject; the
// stream's name is in Error() for the log.
func TestUnavailableNamesNoStream(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "b", Settings{})
	mustSubmit(t, h, "t1", "b", Item{Member: "a", Score: 1})
	if err := h.js.DeleteStream(testCtx(t), streamName("t1")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := h.Submit(ctx, "t1", "b", []Item{{Member: "a", Score: 2}})
	var he *Error
	if !errors.As(err, &he) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Submit to a tenant without a stream: %v, want ErrUnavailable", err)
	}
	if he.Msg != logUnavailable || strings.Contains(he.Msg, streamPrefix) || strings.Contains(he.Msg, "rw.") {
		t.Errorf("client message %q", he.Msg)
	}
	if !strings.Contains(err.Error(), streamName("t1")) {
		t.Errorf("the log line lacks the stream: %v", err)
	}
}

// TestMessagesNameFields: the hub's refusals of input name the field a
// client sent, never an internal package's words.
func TestMessagesNameFields(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "b", Settings{})
	ctx := testCtx(t)
	_, e1 := h.Submit(ctx, "t1", "b", []Item{{Member: "a", Score: 1}, {Member: "bad\xff", Score: 1}})
	_, e2 := h.Submit(ctx, "t1", "b", []Item{{Member: "a\x07", Score: 1}})
	_, e3 := h.PutBoard(ctx, "t1", "b", Settings{Order: "up"})
	_, e4 := h.PutBoard(ctx, "t1", "b", Settings{Policy: "max"})
	_, e5 := h.Link(ctx, "t1", "m", []string{"ok", ""})
	_, e6 := h.Submit(ctx, "t1", "b", []Item{{Member: "a", Score: 1, ID: "k\xff"}})
	for _, c := range []struct {
		err  error
		want string
	}{
		{e6, "scores[0].id: invalid UTF-8"},
		{e1, "scores[1].member: invalid UTF-8"},
		{e2, "scores[0].member: holds a control character"},
		{e3, `order: "up" is neither "desc" nor "asc"`},
		{e4, `policy: "max" is not one of best, latest, sum, first`},
		{e5, "aliases[1]: empty"},
	} {
		var he *Error
		if !errors.As(c.err, &he) || he.Msg != c.want || he.Code != CodeBadRequest {
			t.Errorf("got %v, want bad_request %q", c.err, c.want)
		}
	}
}

// TestConflictNamesTheField: an ordering change refused on a board with
// entries names the field and both values.
func TestConflictNamesTheField(t *testing.T) {
	h := startHub(t, Config{})
	ctx := testCtx(t)
	mustPut(t, h, "t1", "b", Settings{})
	mustSubmit(t, h, "t1", "b", Item{Member: "a", Score: 1})
	for _, c := range []struct {
		s    Settings
		want string
	}{
		{Settings{Order: "asc"}, `order: "desc" cannot become "asc" while the board has entries (reset it first)`},
		{Settings{Policy: "sum"}, `policy: "best" cannot become "sum" while the board has entries (reset it first)`},
		{Settings{Tiebreak: "latest"}, `tiebreak: "earliest" cannot become "latest" while the board has entries (reset it first)`},
	} {
		_, err := h.PutBoard(ctx, "t1", "b", c.s)
		var he *Error
		if !errors.As(err, &he) || he.Code != CodeConflict || he.Msg != c.want || !errors.Is(err, ErrConflict) {
			t.Errorf("PutBoard(%+v) = %v, want conflict %q", c.s, err, c.want)
		}
	}
}

// A write to a board this node's replica does not hold is refused before
// anything is published, as Unpublished (a caller may wait for the replica
// and call again: internal/catchup); a refusal of apply, decided in stream
// order after the event was published, is not.
func TestUnpublishedRefusals(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "b", Settings{})
	before := h.Beat("t1").Applied
	var u *Unpublished
	_, err := h.Submit(testCtx(t), "t1", "nope", []Item{{Member: "m", Score: 1}})
	if !errors.As(err, &u) || !errors.Is(err, ErrNotFound) || h.Beat("t1").Applied != before {
		t.Fatalf("a submission to an unknown board: %v (applied %d → %d), want Unpublished not found, nothing published",
			err, before, h.Beat("t1").Applied)
	}
	if err := h.Reset(testCtx(t), "t9", "b"); !errors.As(err, &u) || !errors.Is(err, ErrNotFound) {
		t.Fatalf("a write to a tenant with no stream: %v, want Unpublished not found", err)
	}
	err = h.RemoveMember(testCtx(t), "t1", "b", "ghost")
	if !errors.Is(err, ErrNotFound) || errors.As(err, &u) || h.Beat("t1").Applied == before {
		t.Fatalf("apply's refusal: %v, want a published not found that is not Unpublished", err)
	}
}

// AwaitApplied answers at once for a sequence applied, waits for one
// that is not (for a tenant open here or not), and ends with its context
// or with the Hub: ErrClosed.
func TestAwaitAppliedEnds(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "b", Settings{})
	at := h.Beat("t1").Applied
	if err := h.AwaitApplied(testCtx(t), "t1", at); err != nil {
		t.Fatalf("an applied seq: %v", err)
	}
	for _, tenant := range []string{"t1", "t8"} { // open here, and not
		ctx, cancel := context.WithTimeout(testCtx(t), 20*time.Millisecond)
		err := h.AwaitApplied(ctx, tenant, at+1)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: a seq not applied: %v, want the context's end", tenant, err)
		}
	}
	done := make(chan error, 2)
	for _, tenant := range []string{"t1", "t8"} {
		go func() { done <- h.AwaitApplied(testCtx(t), tenant, at+1) }()
	}
	h.Close()
	for range 2 {
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Fatalf("the Hub closed: %v, want ErrClosed", err)
		}
	}
}
