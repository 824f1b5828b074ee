package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/internal/await"
)

// centrifugoStub speaks the part of Centrifugo's JSON protocol that
// CentrifugoIdle uses (connect, subscribe, the server's ping): Centrifugo
// itself is not installed where the tests run. refuse makes it refuse
// every subscription; pongs counts the pings answered.
func centrifugoStub(t *testing.T, refuse bool, pongs *atomic.Int64) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m struct {
				ID        int             `json:"id"`
				Subscribe json.RawMessage `json:"subscribe"`
			}
			json.Unmarshal(data, &m)
			switch {
			case string(data) == "{}":
				pongs.Add(1)
			case m.ID == 1:
				c.Write(ctx, websocket.MessageText, []byte(`{"id":1,"connect":{"client":"x","version":"stub"}}`))
			case m.ID == 2 && refuse:
				c.Write(ctx, websocket.MessageText, []byte(`{"id":2,"error":{"code":103,"message":"permission denied"}}`))
			case m.ID == 2:
				c.Write(ctx, websocket.MessageText, []byte(`{"id":2,"subscribe":{}}`))
				c.Write(ctx, websocket.MessageText, []byte(`{}`)) // a ping
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/connection/websocket"
}

func TestCentrifugoIdleConnectsSubscribesAndPongs(t *testing.T) {
	var pongs atomic.Int64
	url := centrifugoStub(t, false, &pongs)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := CentrifugoIdle(ctx, CentrifugoIdleConfig{URL: url, Conns: 8, PID: os.Getpid(), Hold: 200 * time.Millisecond, SrcIPs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Connected != 8 || r.RSSIdle == 0 || r.RSSConnected == 0 {
		t.Errorf("report %+v: want 8 connected and both RSS readings", r)
	}
	if !strings.Contains(r.String(), "8 connected") {
		t.Errorf("report line %q", r.String())
	}
}

func TestCentrifugoHoldAnswersPings(t *testing.T) {
	var pongs atomic.Int64
	url := centrifugoStub(t, false, &pongs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := centrifugoJoin(ctx, http.DefaultClient, url, false, centrifugoIdleChannel(1))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		centrifugoHold(ctx, c)
	}()
	await.For(t, 10*time.Second, func() error {
		if pongs.Load() == 0 {
			return errors.New("the stub's ping not answered")
		}
		return nil
	})
	cancel()
	<-done
}

func TestCentrifugoIdleRefusedSubscription(t *testing.T) {
	var pongs atomic.Int64
	url := centrifugoStub(t, true, &pongs)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := CentrifugoIdle(ctx, CentrifugoIdleConfig{URL: url, Conns: 2, Hold: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("err %v, want the refusal's message", err)
	}
}
