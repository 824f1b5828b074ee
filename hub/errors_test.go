package hub

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// internalName matches what a client message must never hold: a package
// prefix, a stream or subject name, a Go type.
var internalName = regexp.MustCompile(`hub:|identity:|board: invalid|RW_|rw\.|\*|\bjson:`)

// TestErrorsCarryCodes: each refusal is a *Error with the protocol code
// and a message that starts with the field or object at fault, and still
// matches its sentinel with errors.Is.
func TestErrorsCarryCodes(t *testing.T) {
	h := startHub(t, Config{})
	ctx := testCtx(t)
	mustPut(t, h, "t1", "b", Settings{})
	mustSubmit(t, h, "t1", "b", Item{Member: "a", Score: 1})
	_, errBadOrder := h.PutBoard(ctx, "t1", "c", Settings{Order: "up"})
	_, errBadWindow := h.PutBoard(ctx, "t1", "c", Settings{Windows: []string{"all", "year"}})
	_, errConflict := h.PutBoard(ctx, "t1", "b", Settings{Order: "asc"})
	_, errNoBoard := h.Board("t1", "nope")
	_, errNoMember := h.Member(Loc{Tenant: "t1", Board: "b"}, "ghost")
	_, errBatch := h.Submit(ctx, "t1", "b", []Item{{Member: "a", Score: 1}, {Member: "", Score: 1}})
	_, errID := h.Submit(ctx, "t1", "b", []Item{{Member: "a", Score: 1, ID: "k\xff"}})
	_, errAlias := h.Link(ctx, "t1", "a", []string{"x", ""})
	_, errTenant := h.Board("T!", "b")
	tests := []struct {
		name   string
		err    error
		target error
		code   Code
		msg    string
	}{
		{"bad order", errBadOrder, ErrBadRequest, CodeBadRequest, `order: "up" is neither desc nor asc`},
		{"bad window", errBadWindow, ErrBadRequest, CodeBadRequest, `windows[1]: "year" is not one of all, day, week, month`},
		{"ordering change with entries", errConflict, ErrConflict, CodeConflict, `order: "desc" cannot become "asc" while the board has entries (reset it first)`},
		{"unknown board", errNoBoard, ErrNotFound, CodeNotFound, `board: no board "nope"`},
		{"unknown member", errNoMember, ErrNotFound, CodeNotFound, `member: "ghost" is not on the board`},
		{"batch item", errBatch, ErrBadRequest, CodeBadRequest, "scores[1].member: empty identifier"},
		{"id not UTF-8", errID, ErrBadRequest, CodeBadRequest, "scores[0].id: invalid UTF-8"},
		{"empty alias", errAlias, ErrBadRequest, CodeBadRequest, "aliases[1]: empty identifier"},
		{"bad tenant", errTenant, ErrNotFound, CodeNotFound, ""},
	}
	for _, tt := range tests {
		var e *Error
		if !errors.As(tt.err, &e) {
			t.Errorf("%s: %v is not a *Error", tt.name, tt.err)
			continue
		}
		if e.Code != tt.code || tt.msg != "" && e.Msg != tt.msg || !errors.Is(tt.err, tt.target) {
			t.Errorf("%s: %s %q, want %s %q", tt.name, e.Code, e.Msg, tt.code, tt.msg)
		}
		if internalName.MatchString(e.Msg) {
			t.Errorf("%s: %q names an internal", tt.name, e.Msg)
		}
	}
}

// TestUnavailableNamesNoStream: a publish the log refuses (its stream
// deleted behind the gateway's back) is unavailable with a message that
// names no stream; the stream is in the detail, for the log.
func TestUnavailableNamesNoStream(t *testing.T) {
	h := startHub(t, Config{})
	ctx := testCtx(t)
	mustPut(t, h, "t1", "b", Settings{})
	if err := h.js.DeleteStream(ctx, streamName("t1")); err != nil {
		t.Fatal(err)
	}
	_, err := h.Submit(ctx, "t1", "b", []Item{{Member: "a", Score: 1}})
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeUnavailable || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Submit = %v, want an unavailable *Error", err)
	}
	if e.Msg != "the tenant's log is unavailable" || internalName.MatchString(e.Msg) {
		t.Errorf("message %q", e.Msg)
	}
	if !strings.Contains(err.Error(), streamName("t1")) {
		t.Errorf("the log text %q lost the stream", err.Error())
	}
}
