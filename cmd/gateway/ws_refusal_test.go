package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestWSRefusalsAreCloseCodes: on the real gateway, a page of a foreign
// origin and a bad access_token see what a browser can see: the upgrade
// succeeds and closes at once with 4003 and a reason, before any message,
// even though the client subscribes first.
func TestWSRefusalsAreCloseCodes(t *testing.T) {
	keys, sk := keyFile(t)
	p := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir())
	tok := adminToken(t, sk)
	cases := []struct {
		name, query, origin, reason string
	}{
		{"foreign origin", "access_token=" + tok, "https://evil.example", "origin refused: https://evil.example"},
		{"bad token", "access_token=" + tok[:len(tok)-4] + "AAAA", "", "token refused: "},
	}
	for _, c := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		opts := &websocket.DialOptions{HTTPHeader: http.Header{}}
		if c.origin != "" {
			opts.HTTPHeader.Set("Origin", c.origin)
		}
		conn, resp, err := websocket.Dial(ctx, "ws://"+p.addr+"/v1/ws?"+c.query, opts)
		if err != nil {
			cancel()
			t.Fatalf("%s: dial: %v (status %v), want an upgrade then a close", c.name, err, resp)
		}
		_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"subscribe","id":"s","board":"b","view":{"kind":"top"}}`))
		typ, data, err := conn.Read(ctx)
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != 4003 || !strings.HasPrefix(ce.Reason, c.reason) {
			t.Errorf("%s: read %v %q %v, want close 4003 %q", c.name, typ, data, err, c.reason)
		}
		conn.CloseNow()
		cancel()
	}
}
