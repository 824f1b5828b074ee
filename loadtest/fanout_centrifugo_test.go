package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// centrifugoPubStub speaks the part of Centrifugo the peer uses: the
// client's connect and subscribe, and the server API's publish and batch
// of publishes (key checked), each pushed to every client subscribed to
// its channel, two copies in one frame as Centrifugo batches a
// connection's pending pushes. Its address is host:port.
func centrifugoPubStub(t *testing.T, key string) string {
	t.Helper()
	var mu sync.Mutex
	subs := map[chan []byte]string{} // a client's pushes → its channel
	type publish struct {
		Channel string          `json:"channel"`
		Data    json.RawMessage `json:"data"`
	}
	push := func(p publish) {
		one := []byte(`{"push":{"channel":"` + p.Channel + `","pub":{"data":` + string(p.Data) + `,"offset":1}}}`)
		frame := bytes.Join([][]byte{one, one}, []byte{'\n'})
		mu.Lock()
		defer mu.Unlock()
		for ch, channel := range subs {
			if channel != p.Channel {
				continue
			}
			select {
			case ch <- frame:
			default:
			}
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/publish", func(w http.ResponseWriter, r *http.Request) {
		var req publish
		if r.Header.Get("X-API-Key") != key || json.NewDecoder(r.Body).Decode(&req) != nil {
			io.WriteString(w, `{"error":{"code":101,"message":"unauthorized"}}`)
			return
		}
		push(req)
		io.WriteString(w, `{"result":{}}`)
	})
	mux.HandleFunc("/api/batch", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Commands []struct {
				Publish *publish `json:"publish"`
			} `json:"commands"`
		}
		if r.Header.Get("X-API-Key") != key || json.NewDecoder(r.Body).Decode(&req) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var replies []string
		for _, c := range req.Commands {
			if c.Publish == nil || strings.Contains(c.Publish.Channel, ":") {
				replies = append(replies, `{"error":{"code":102,"message":"unknown channel"}}`)
				continue
			}
			push(*c.Publish)
			replies = append(replies, `{"publish":{}}`)
		}
		io.WriteString(w, `{"replies":[`+strings.Join(replies, ",")+`]}`)
	})
	mux.HandleFunc("/connection/websocket", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		var sub struct {
			Subscribe struct {
				Channel string `json:"channel"`
			} `json:"subscribe"`
		}
		for id := 1; id <= 2; id++ { // connect, then subscribe
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			json.Unmarshal(data, &sub)
			c.Write(ctx, websocket.MessageText, []byte(`{"id":`+strconv.Itoa(id)+`,"result":{}}`))
		}
		ch := make(chan []byte, 64)
		mu.Lock()
		subs[ch] = sub.Subscribe.Channel
		mu.Unlock()
		defer func() { mu.Lock(); delete(subs, ch); mu.Unlock() }()
		go func() { // reads pongs; ends with the connection
			for {
				if _, _, err := c.Read(ctx); err != nil {
					return
				}
			}
		}()
		c.Write(ctx, websocket.MessageText, []byte(`{}`)) // a ping
		for {
			select {
			case <-ctx.Done():
				return
			case f := <-ch:
				if c.Write(ctx, websocket.MessageText, f) != nil {
					return
				}
			}
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestFanoutCentrifugoPeer runs 10 subscribers on "Redis + app +
// Centrifugo" (a stub of Centrifugo, a real Redis) for 2 s: every one
// subscribes, the top N the app publishes reaches them and decodes into
// latency samples, and the node figures are read.
func TestFanoutCentrifugoPeer(t *testing.T) {
	addr := startRedis(t)
	cf := centrifugoPubStub(t, "k")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	me := os.Getpid()
	rep, err := RunFanout(ctx, FanoutConfig{Target: Target{Board: "cf" + strconv.Itoa(time.Now().Nanosecond())}, Redis: addr,
		Centrifugo: cf, CentrifugoKey: "k", Subscribers: 10, BoardMembers: 10, Rate: 50, Batch: 1, Writers: 1,
		Duration: 2 * time.Second, Drain: 300 * time.Millisecond, Nodes: []Node{{PID: me}, {PID: me}}})
	if err != nil {
		t.Fatalf("RunFanout: %v", err)
	}
	t.Log(rep)
	if rep.Peer != "centrifugo" || rep.Connected != 10 || rep.MessagesPerSec <= 0 || len(rep.WorkerErrors) > 0 || len(rep.WriteErrors) > 0 {
		t.Fatalf("peer %s, connected %d, messages/s %.0f, worker errors %v, write errors %v", rep.Peer, rep.Connected, rep.MessagesPerSec, rep.WorkerErrors, rep.WriteErrors)
	}
	if l := rep.Latency["top"]; l.Count == 0 || l.P50 <= 0 || l.Max > 5*time.Second {
		t.Errorf("top latency %v", l)
	}
	if len(rep.Errors) > 0 || len(rep.Closes) > 0 {
		t.Errorf("errors %v, closes %v", rep.Errors, rep.Closes)
	}
	if len(rep.Nodes) != 2 || rep.Nodes[0].RSSEnd == 0 || rep.RSSEnd != rep.Nodes[0].RSSEnd+rep.Nodes[1].RSSEnd {
		t.Errorf("nodes %+v, RSS at the end %d", rep.Nodes, rep.RSSEnd)
	}
}

// TestFanoutCentrifugoWrongKey: a publish the server refuses is a write
// error, not a silent success.
func TestFanoutCentrifugoWrongKey(t *testing.T) {
	cf := centrifugoPubStub(t, "right")
	p := newCentrifugoPublisher(cf, "wrong", "c", 1)
	if err := p.publish(context.Background(), []byte(`{"rows":[]}`)); err == nil {
		t.Fatal("publish with the wrong key: no error")
	}
	if err := newCentrifugoPublisher(cf, "right", "c", 1).publish(context.Background(), []byte(`{"rows":[]}`)); err != nil {
		t.Fatalf("publish with the right key: %v", err)
	}
}

// TestCentrifugoData finds the publication's data in a push line, with
// fields after it, and refuses a line without it or with broken JSON.
func TestCentrifugoData(t *testing.T) {
	tests := []struct {
		line, want string
		ok         bool
	}{
		{`{"push":{"channel":"c","pub":{"data":{"rows":[{"member":"m1","score":2}]},"offset":3}}}`, `{"rows":[{"member":"m1","score":2}]}`, true},
		{`{"push":{"channel":"c","pub":{"data": {"rows":[]}}}}`, `{"rows":[]}`, true},
		{`{"push":{"channel":"c","join":{}}}`, "", false},
		{`{"push":{"channel":"c","pub":{"data":{"rows":[`, "", false},
	}
	for _, tt := range tests {
		got, _, _, ok := centrifugoData([]byte(tt.line))
		if ok != tt.ok || string(got) != tt.want {
			t.Errorf("centrifugoData(%s) = %s, %v; want %s, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

// TestCentrifugoConfigChecks: the peer needs Redis (the app's sorted set)
// and a host:port, and serves top views or around views.
func TestCentrifugoConfigChecks(t *testing.T) {
	if err := (FanoutConfig{Centrifugo: "127.0.0.1:1", PerConn: 1}).check(); err != errCentrifugoRedis {
		t.Errorf("without Redis: %v", err)
	}
	if err := (FanoutConfig{Centrifugo: "http://127.0.0.1:1", Redis: "127.0.0.1:2", PerConn: 1}).check(); err == nil {
		t.Error("a URL for the address: no error")
	}
	if err := (FanoutConfig{Centrifugo: "127.0.0.1:1", Redis: "127.0.0.1:2", PerConn: 1}).check(); err != nil {
		t.Errorf("with Redis: %v", err)
	}
	for _, c := range []FanoutConfig{{Top: 1, Around: 1}, {Around: 1, Rank: 1}, {Top: 1, MembersViews: 1}} {
		c.Centrifugo, c.Redis = "127.0.0.1:1", "127.0.0.1:2"
		if err := c.withDefaults().check(); err != errCentrifugoViews {
			t.Errorf("views top %d around %d rank %d members %d: %v", c.Top, c.Around, c.Rank, c.MembersViews, err)
		}
	}
	if err := (FanoutConfig{Centrifugo: "127.0.0.1:1", Redis: "127.0.0.1:2", Rank: 1, PerConn: 2}).withDefaults().check(); err != errPerConnAround {
		t.Errorf("rank lines, 2 a connection: %v, want errPerConnAround", err)
	}
	for _, c := range []FanoutConfig{{Rank: 1}, {MembersViews: 1}, {Rank: 1, MembersViews: 2}} {
		c.Centrifugo, c.Redis = "127.0.0.1:1", "127.0.0.1:2"
		if err := c.withDefaults().check(); err != nil {
			t.Errorf("rank %d members %d: %v", c.Rank, c.MembersViews, err)
		}
	}
	c := FanoutConfig{Centrifugo: "127.0.0.1:1", Redis: "127.0.0.1:2", Around: 1}.withDefaults()
	if err := c.check(); err != nil || c.Around != 1 || c.Top != 0 {
		t.Errorf("around only: top %d around %d, %v", c.Top, c.Around, err)
	}
	if c := (FanoutConfig{Redis: "127.0.0.1:2", Around: 1}).withDefaults(); c.Top != 1 || c.Around != 0 {
		t.Errorf("the Redis peer alone: top %d around %d, want the top view only", c.Top, c.Around)
	}
}

// The commands sent to Centrifugo are JSON whatever the channel's name:
// the runes Go's %q escapes its own way (\x7f, \a, a rune it cannot
// print) and the ones JSON must escape come back as they were.
func TestCentrifugoCommandsAreJSON(t *testing.T) {
	for _, channel := range []string{"lobby", "rw\x7f\a\x00", "q\"uote\\back", "\u2028\U000e0001", "é🏆"} {
		var pub struct {
			Channel string          `json:"channel"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(appendPublish(nil, channel, []byte(`{"a":1}`), false), &pub); err != nil || pub.Channel != channel || string(pub.Data) != `{"a":1}` {
			t.Errorf("publish to %q: decoded %+v, %v", channel, pub, err)
		}
		var sub struct {
			ID        int `json:"id"`
			Subscribe struct {
				Channel string `json:"channel"`
			} `json:"subscribe"`
		}
		if err := json.Unmarshal(subscribeCommand(2, channel, false), &sub); err != nil || sub.ID != 2 || sub.Subscribe.Channel != channel {
			t.Errorf("subscribe to %q: decoded %+v, %v", channel, sub, err)
		}
	}
}
