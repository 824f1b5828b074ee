package api

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"net/url"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/hub"
)

// TestCursorsOpaque: a page's next holds no sequence or member handle in
// the clear, and a tampered, forged, other board's or other tenant's
// cursor is refused with 400 naming after, while the cursor itself pages
// on for the tenant and board it was issued on. Twin tenants a and b have
// a board named alike with the same members.
func TestCursorsOpaque(t *testing.T) {
	e := newEnvLimits(t, Config{}, `"submissions_per_second":1e6,"board_writes_per_second":1e6`)
	ta, tb := e.token("a", admin), e.token("b", admin)
	for _, tok := range []string{ta, tb} {
		for _, b := range []string{"b", "c"} {
			e.must(200, "PUT", "/v1/boards/"+b, tok, `{}`)
			e.must(200, "POST", "/v1/boards/"+b+"/scores", tok, scoresBody(0, 30, func(i int) float64 { return float64(i) }))
		}
	}
	next := e.must(200, "GET", "/v1/boards/b/top?limit=10", ta, "")["next"].(string)
	raw, err := base64.RawURLEncoding.DecodeString(next)
	if err != nil {
		t.Fatalf("next %q is not base64url: %v", next, err)
	}
	for _, v := range []uint64{20, 21, 30} { // the page's last entry's sequence lies about here
		if bytes.Contains(raw, binary.BigEndian.AppendUint64(nil, v)) {
			t.Errorf("next %q carries %d in the clear", next, v)
		}
	}
	again := e.must(200, "GET", "/v1/boards/b/top?limit=10", ta, "")["next"].(string)
	if again == next {
		t.Errorf("two reads of one page gave the same cursor %q: the nonce repeats", next)
	}
	if got := members(e.must(200, "GET", "/v1/boards/b/top?limit=10&after="+url.QueryEscape(next), ta, "")); len(got) != 10 || got[0] != "m19" {
		t.Errorf("a's cursor on a's board: %v, want m19 first", got)
	}
	flip := append([]byte(nil), raw...)
	flip[len(flip)/2] ^= 1
	for _, tc := range []struct{ name, path, tok, cursor string }{
		{"tenant b", "/v1/boards/b/top?limit=10", tb, next},
		{"tenant b, scores", "/v1/boards/b/scores?limit=10", tb, next},
		{"another board", "/v1/boards/c/top?limit=10", ta, next},
		{"another window", "/v1/boards/b/top?limit=10&window=day", ta, next},
		{"a flipped bit", "/v1/boards/b/top?limit=10", ta, base64.RawURLEncoding.EncodeToString(flip)},
		{"truncated", "/v1/boards/b/top?limit=10", ta, next[:len(next)-2]},
		{"a plain position", "/v1/boards/b/top?limit=10", ta, plainCursor(t)},
		{"another key", "/v1/boards/b/top?limit=10", ta, newCursorBox(nil).seal(hub.Loc{Tenant: "a", Board: "b"}, hub.Cursor{})},
	} {
		status, out := e.do("GET", tc.path+"&after="+url.QueryEscape(tc.cursor), tc.tok, "")
		if code, msg := errCode(out); status != 400 || code == "" || !strings.Contains(msg, "after") || !strings.Contains(msg, "cursor") {
			t.Errorf("%s: %d %s %q, want 400 naming after and cursor", tc.name, status, code, msg)
		}
	}
}

// plainCursor is a position in the ledger's clear layout: what cursors
// were before they were sealed.
func plainCursor(t *testing.T) string {
	b, _ := hub.Cursor{}.MarshalBinary()
	return base64.RawURLEncoding.EncodeToString(b)
}

// TestCursorKeyShared: two servers given one key open each other's
// cursors (the nodes of a cluster); DeriveCursorKey is deterministic and
// CursorKeyLen long, and separates secrets.
func TestCursorKeyShared(t *testing.T) {
	k := DeriveCursorKey([]byte("0123456789abcdef0123456789abcdef"))
	if len(k) != CursorKeyLen || !bytes.Equal(k, DeriveCursorKey([]byte("0123456789abcdef0123456789abcdef"))) {
		t.Fatalf("DeriveCursorKey: %x, not stable or not %d bytes", k, CursorKeyLen)
	}
	if bytes.Equal(k, DeriveCursorKey([]byte("0123456789abcdef0123456789abcdeF"))) {
		t.Fatal("DeriveCursorKey: two secrets, one key")
	}
	l := hub.Loc{Tenant: "a", Board: "b", Window: "day"}
	c, err := newCursorBox(k).open(l, newCursorBox(k).seal(l, hub.Cursor{}))
	if err != nil || c != (hub.Cursor{}) {
		t.Fatalf("a cursor sealed by one box with key k, opened by another: %+v, %v", c, err)
	}
}
