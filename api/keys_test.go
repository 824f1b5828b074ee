package api

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/edgetest"
)

// TestReloadKeysClosesWebSockets: ReloadKeys refuses nil, and removing
// casino-b refuses its tokens over HTTP and closes its WebSocket with 4003
// (the plane's sweep: internal/live's TestReloadKeysClosesRemovedTenant
// covers every way in).
func TestReloadKeysClosesWebSockets(t *testing.T) {
	e := newLiveEnv(t, Config{})
	adminB := e.token("b", auth.RoleAdmin)
	c := e.dial("access_token="+adminB, false, nil)
	if _, err := e.s.ReloadKeys(nil); !errors.Is(err, auth.ErrKeyFile) {
		t.Fatalf("ReloadKeys(nil) = %v, want ErrKeyFile", err)
	}
	checkFor(t, 5*time.Second, func() error { // the connection is authenticated
		if n, _ := e.s.live.Usage("casino-b"); n != 1 {
			return fmt.Errorf("%d connections of casino-b", n)
		}
		return nil
	})
	if _, err := e.s.ReloadKeys(edgetest.KeysA(t, "", "")); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.Conn().Read(t.Context())
	if code := websocket.CloseStatus(err); code != 4003 {
		t.Errorf("casino-b's WebSocket: close %d (%v), want 4003", code, err)
	}
	e.must(401, "GET", "/v1/boards", adminB, "")
}

// TestReloadKeysAppliesLimits: a lowered board limit and submission rate
// apply from the reload on, to a tenant that already has a rate bucket.
func TestReloadKeysAppliesLimits(t *testing.T) {
	e := newEnv(t, Config{})
	s := e.api
	admin := e.token("a", auth.RoleAdmin)
	e.must(200, "PUT", "/v1/boards/b0", admin, "")
	e.must(200, "POST", "/v1/boards/b0/scores", admin, `{"member":"m","score":1}`)
	if _, err := s.ReloadKeys(edgetest.KeysA(t, `"boards":1,"submissions_per_second":2`, "")); err != nil {
		t.Fatal(err)
	}
	if code, msg := errCode(e.must(429, "PUT", "/v1/boards/b1", admin, "")); code != "rate_limited" {
		t.Errorf("second board under a reloaded limit of 1: %s %q", code, msg)
	}
	limited := 0
	for i := range 10 {
		if status, _ := e.do("POST", "/v1/boards/b0/scores", admin, fmt.Sprintf(`{"member":"m%d","score":1}`, i)); status == 429 {
			limited++
		}
	}
	if limited == 0 {
		t.Error("10 submissions at once passed a reloaded rate of 2 a second")
	}
}

// authedOf counts the authenticated connections of tenant.
