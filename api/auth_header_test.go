package api

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/auth"
)

// TestTwoCredentialsRefused: two Authorization headers, or access_token
// twice, are refused rather than resolved by picking one: a proxy in front
// and the gateway could each read a different one. Both tokens are valid,
// so only the ambiguity is refused.
func TestTwoCredentialsRefused(t *testing.T) {
	e := newEnv(t, Config{})
	e.must(200, "PUT", "/v1/boards/slots", e.token("a", admin), `{}`)
	a, b := e.token("a", auth.RoleRead), e.token("b", auth.RoleRead)

	req, err := http.NewRequest("GET", e.srv.URL+"/v1/boards/slots/top", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Add("Authorization", "Bearer "+a)
	req.Header.Add("Authorization", "Bearer "+b)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("two Authorization headers: %d, want 400", resp.StatusCode)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	url := "ws" + e.srv.URL[len("http"):] + "/v1/ws?access_token=" + a + "&access_token=" + b
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	_, _, err = c.Read(ctx)
	if code := websocket.CloseStatus(err); code != 4003 {
		t.Errorf("access_token twice: close %d (%v), want 4003", code, err)
	}
}
