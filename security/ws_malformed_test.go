package security

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsGarbage are client messages that must each be answered with an error
// message of the protocol's vocabulary, naming no Go type, with the
// connection kept.
var wsGarbage = []string{
	`{`, `[]`, `"subscribe"`, `42`, `null`, `{}`,
	`{"type":"nope","id":"g1"}`,
	`{"type":"subscribe"}`,
	`{"type":"subscribe","id":7,"board":"poker-final","view":{"kind":"top","limit":10}}`,
	`{"type":"subscribe","id":"g2","board":"poker-final","view":{"kind":"top","limit":"10"}}`,
	`{"type":"subscribe","id":"g3","board":"poker-final","view":{"kind":"top","limit":1e309}}`,
	`{"type":"subscribe","id":"g4","board":"poker-final","view":{"kind":"top","limit":-1}}`,
	`{"type":"subscribe","id":"g5","board":"poker-final","view":{"kind":"top","limit":101}}`,
	`{"type":"subscribe","id":"g6","board":"poker-final","view":{"kind":"nope"}}`,
	`{"type":"subscribe","id":"g7","board":"poker-final","view":{"kind":"members","members":{"a":1}}}`,
	`{"type":"subscribe","id":"g8","board":"../zebra-vault","view":{"kind":"top","limit":10}}`,
	`{"type":"subscribe","id":"g9","board":"zebra-vault.>","view":{"kind":"top","limit":10}}`,
	`{"type":"subscribe","id":"g10","board":"slots-*","view":{"kind":"top","limit":10}}`,
	`{"type":"subscribe","id":"g11","board":"poker-final","since":"abc","view":{"kind":"top","limit":10}}`,
	`{"type":"subscribe","id":"g12","board":"poker-final","window":"year","view":{"kind":"top","limit":10}}`,
	`{"type":"subscribe","id":"g13","board":"poker-final","view":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`,
	`{"type":"auth","token":42}`,
	`{"type":"unsubscribe","id":["g1"]}`,
}

// TestMalformedWebSocketMessages: garbage on a live connection is
// answered with protocol errors naming no Go type and nothing of tenant B;
// the connection stays usable. An over-long message closes 1009, and a
// text frame that is not UTF-8 is refused (bad_request) or closed 1007.
func TestMalformedWebSocketMessages(t *testing.T) {
	w := dialWS(t, tokA(t, base(tenantA, "read")))
	for _, msg := range wsGarbage {
		writeRaw(t, w, websocket.MessageText, []byte(msg))
		m, err := w.next(3 * time.Second)
		if err != nil {
			t.Fatalf("%.80s: %v", msg, err)
		}
		code, _ := m["code"].(string)
		text, _ := m["message"].(string)
		if m["type"] != "error" || codes[code] == 0 || code == "internal" {
			t.Errorf("%.80s: answered %v", msg, m)
		}
		if bad := goType.FindString(text); bad != "" {
			t.Errorf("%.80s: message names %q: %q", msg, bad, text)
		}
	}
	noLeak(t, "garbage replies", scrub(w.all()))
	w.send(t, map[string]any{"type": "subscribe", "id": "ok", "board": "poker-final", "view": map[string]any{"kind": "top", "limit": 3}})
	w.until(t, 5*time.Second, "a snapshot after the garbage", isType("snapshot", "ok"))

	writeRaw(t, w, websocket.MessageText, []byte("{\"type\":\"subscribe\",\"id\":\"u\xff\xfe\",\"board\":\"poker-final\",\"view\":{\"kind\":\"top\",\"limit\":3}}"))
	if m, err := w.next(3 * time.Second); err == nil && (m["type"] != "error" || m["code"] != "bad_request") {
		t.Errorf("invalid UTF-8: answered %v", m)
	} else if err != nil && websocket.CloseStatus(err) != websocket.StatusInvalidFramePayloadData {
		t.Errorf("invalid UTF-8: %v, want bad_request or close 1007", err)
	}

	big := dialWS(t, tokA(t, base(tenantA, "read")))
	writeRaw(t, big, websocket.MessageText, []byte(`{"type":"subscribe","id":"`+strings.Repeat("x", 70<<10)+`"}`))
	if got := big.closeCode(3 * time.Second); got != websocket.StatusMessageTooBig {
		t.Errorf("a 70 KiB message: closed %d, want 1009", got)
	}
}

// writeRaw writes one frame as is, whatever its bytes.
func writeRaw(t *testing.T, w *wsConn, typ websocket.MessageType, b []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, typ, b); err != nil {
		t.Fatalf("ws write: %v", err)
	}
}
