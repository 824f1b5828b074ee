package security

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestFloodStaysWithItsTenant: tenant C at its submission rate and its
// connection cap gets 429 and close 4029, while tenants A and B submit
// and connect as usual.
func TestFloodStaysWithItsTenant(t *testing.T) {
	adminC := hs(t, "c1", gw.secretC, base(tenantC, "admin"))
	mustOK(t, "PUT", "/v1/boards/flood", adminC, `{}`)
	batch := `{"scores":[` + strings.TrimSuffix(strings.Repeat(`{"member":"f","score":1},`, 100), ",") + `]}`
	limited := false
	for i := 0; i < 10 && !limited; i++ {
		r := do(t, "POST", "/v1/boards/flood/scores", adminC, batch)
		if r.status >= 500 {
			t.Fatalf("flood: %d %s", r.status, r.body)
		}
		limited = r.status == 429
	}
	if !limited {
		t.Fatal("1,000 items in a burst by a tenant limited to 100 a second: never 429")
	}
	mustOK(t, "POST", "/v1/boards/slots-1/scores", tokA(t, base(tenantA, "submit")), `{"member":"s-one","score":10}`)
	mustOK(t, "POST", "/v1/boards/zebra-vault/scores", tokB(t, base(tenantB, "submit")), `{"member":"zq-whale-9931","score":1}`)

	readC := hs(t, "c1", gw.secretC, base(tenantC, "read"))
	var held []*wsConn
	for i := range 3 {
		w := dialWS(t, readC)
		w.send(t, map[string]any{"type": "subscribe", "id": fmt.Sprint(i), "board": "flood", "view": map[string]any{"kind": "top", "limit": 1}})
		w.until(t, 5*time.Second, "C's snapshot", isType("snapshot", fmt.Sprint(i)))
		held = append(held, w)
	}
	if got := dialWS(t, readC).closeCode(3 * time.Second); got != 4029 {
		t.Errorf("tenant C's 4th connection with a cap of 3: closed %d, want 4029", got)
	}
	for name, tok := range map[string]string{"A": tokA(t, base(tenantA, "read")), "B": tokB(t, base(tenantB, "read"))} {
		w := dialWS(t, tok)
		w.send(t, map[string]any{"type": "subscribe", "id": "x", "board": "poker-final", "view": map[string]any{"kind": "top", "limit": 1}})
		if m := w.until(t, 5*time.Second, name+"'s answer", func(m map[string]any) bool { return m["id"] == "x" }); m["type"] != "snapshot" {
			t.Errorf("tenant %s while C is at its cap: %v", name, m)
		}
	}
	for _, w := range held {
		_ = w.c.Close(websocket.StatusNormalClosure, "")
	}
}
