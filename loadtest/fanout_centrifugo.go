package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// The Centrifugo peer is "Redis + app + Centrifugo": the writers are the
// app, which keeps the board in a Redis sorted set and publishes through
// Centrifugo's server API (its API key in X-API-Key); every subscriber is a
// Centrifugo client (JSON protocol over WebSocket: connect, subscribe to
// its view's channel) that receives the full state on every change. Two
// views exist: the shared top N (ZADD, read the top N back, and where it
// changed POST /api/publish of the whole top N to the board's channel) and
// a player's own around view (fanout_around.go: each player's
// neighbourhood published to the player's channel). The latency probe is
// the same as the gateway's: the send time rides in the score (see
// scoreSlot).

// errCentrifugoRedis: the app keeps its board in Redis.
var errCentrifugoRedis = errors.New("loadtest: the Centrifugo peer needs -redis: the app's sorted set")

// errCentrifugoViews: the app publishes a shared top N or each player's
// around view, one of the two per run.
var errCentrifugoViews = errors.New("loadtest: the Centrifugo peer takes top views or around views, not both, and no rank or members views")

// centrifugoPublisher posts to Centrifugo's server API.
type centrifugoPublisher struct {
	hc      *http.Client
	api     string // http://host:port/api
	key     string // X-API-Key
	channel string // publish's
}

func newCentrifugoPublisher(addr, key, channel string, pool int) *centrifugoPublisher {
	tr := &http.Transport{MaxIdleConnsPerHost: pool, MaxConnsPerHost: pool}
	return &centrifugoPublisher{hc: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		api: "http://" + addr + "/api", key: key, channel: channel}
}

// publish sends data (a JSON document) to the publisher's channel;
// Centrifugo's error reply is an error.
func (p *centrifugoPublisher) publish(ctx context.Context, data []byte) error {
	body := make([]byte, 0, len(data)+64)
	body = appendPublish(body, p.channel, data)
	return p.post(ctx, "/publish", body)
}

// channelData is one publication: a JSON document for a channel.
type channelData struct {
	channel string
	data    []byte
}

// publishBatch sends the publications in one request (POST /api/batch, a
// publish command each, done in order); an error reply to any of them is
// an error.
func (p *centrifugoPublisher) publishBatch(ctx context.Context, pubs []channelData) error {
	if len(pubs) == 0 {
		return nil
	}
	body := []byte(`{"commands":[`)
	for i, pub := range pubs {
		if i > 0 {
			body = append(body, ',')
		}
		body = appendPublish(append(body, `{"publish":`...), pub.channel, pub.data)
		body = append(body, '}')
	}
	return p.post(ctx, "/batch", append(body, "]}"...))
}

// appendPublish appends a publish command's body: the channel and data
// (JSON already).
func appendPublish(b []byte, channel string, data []byte) []byte {
	b = appendJSONString(append(b, `{"channel":`...), channel)
	return append(append(append(b, `,"data":`...), data...), '}')
}

// subscribeCommand is the client's command id 2: subscribe to channel.
func subscribeCommand(channel string) []byte {
	return append(appendJSONString([]byte(`{"id":2,"subscribe":{"channel":`), channel), "}}"...)
}

// appendJSONString appends s as a JSON string. Not fmt's %q nor
// strconv.Quote: they write Go's escapes (\x7f, \a, \U0001f600 for an
// unprintable rune), which no JSON decoder reads.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes (invalid UTF-8 as U+FFFD)
	return append(b, q...)
}

// post sends body to the server API's path; a status other than 200 or a
// reply naming an error is an error.
func (p *centrifugoPublisher) post(ctx context.Context, path string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.api+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", p.key)
	resp, err := p.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK || bytes.Contains(reply, []byte(`"error"`)) {
		return fmt.Errorf("centrifugo %s: %s: %.200s", path, resp.Status, reply)
	}
	return nil
}

// runCentrifugoSubscribers starts subscribers [cfg.From, cfg.To) on
// Centrifugo at cfg.URL (its host:port), each on its view's channel: the
// board's for a top view, its member's for an around view. They run until
// ctx ends; wg waits for them.
func runCentrifugoSubscribers(ctx context.Context, cfg workerConfig, stats *wsStats, sem chan struct{}, wg *sync.WaitGroup) error {
	if err := checkLoopback("http://" + cfg.URL); err != nil {
		return err
	}
	hc := sourceClient(cfg.SrcIP)
	u := "ws://" + cfg.URL + "/connection/websocket"
	for i := cfg.From; i < cfg.To; i++ {
		v, kind := cfg.Plan.view(i)
		ch := redisChannel(cfg.Board)
		if kind == 1 {
			ch = aroundChannel(cfg.Board, v.Member)
		}
		c := &wsConn{stats: stats, shard: i % statShards, subs: []wsSub{{kind: kind}}}
		wg.Go(func() { c.runCentrifugo(ctx, hc, u, ch, sem) })
	}
	return nil
}

// runCentrifugo is a connection with one subscription, to channel.
func (c *wsConn) runCentrifugo(ctx context.Context, hc *http.Client, u, channel string, sem chan struct{}) {
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	ws, err := centrifugoJoin(ctx, hc, u, channel)
	<-sem
	if err != nil {
		c.stats.dialErrors.Add(1)
		c.stats.failed.Add(1)
		c.stats.count(c.stats.errors, "centrifugo join: "+shortErr(err))
		return
	}
	defer ws.CloseNow()
	c.subs[0].joined = time.Now()
	c.stats.connected.Add(1)
	c.stats.connections.Add(1)
	defer c.stats.connected.Add(-1)
	defer c.stats.connections.Add(-1)
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.stats.count(c.stats.closes, "centrifugo:"+shortErr(err))
			}
			return
		}
		c.centrifugoFrame(ctx, ws, data, time.Now())
	}
}

// centrifugoFrame handles one frame: newline-separated replies and pushes
// (Centrifugo batches a connection's pending ones into a frame). A ping
// ({}) is answered with a pong; a publication counts as a message and its
// rows are observed.
func (c *wsConn) centrifugoFrame(ctx context.Context, ws *websocket.Conn, data []byte, now time.Time) {
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		switch {
		case len(line) == 0:
		case string(line) == "{}":
			_ = ws.Write(ctx, websocket.MessageText, []byte("{}"))
		case bytes.HasPrefix(line, []byte(`{"push":`)):
			c.counted(len(line))
			pub, ok := centrifugoData(line)
			if !ok || decodeWSMessage(pub, &c.msg) != nil {
				c.stats.count(c.stats.errors, "decode")
				continue
			}
			for _, r := range c.msg.Rows {
				c.observe(&c.subs[0], r.Member, r.Score, now)
			}
		}
	}
}

// centrifugoData is the publication's data object in a push line: the
// JSON value after its "data" key (the app publishes an object of rows;
// the JSON protocol embeds it as it was sent).
func centrifugoData(line []byte) ([]byte, bool) {
	i := bytes.Index(line, []byte(`"data":`))
	if i < 0 {
		return nil, false
	}
	d := jsonScanner{data: line, off: i + len(`"data":`)}
	d.space()
	start := d.off
	if d.skip(3) != nil {
		return nil, false
	}
	return line[start:d.off], true
}

// centrifugoJoin dials u, connects (no token: the server runs in insecure
// client mode) and subscribes to channel, waiting for both replies.
func centrifugoJoin(ctx context.Context, hc *http.Client, u, channel string) (*websocket.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	cmds := [][]byte{[]byte(`{"id":1,"connect":{"name":"rwload"}}`), subscribeCommand(channel)}
	for id, cmd := range cmds {
		if err := c.Write(dctx, websocket.MessageText, cmd); err != nil {
			c.CloseNow()
			return nil, err
		}
		if err := centrifugoReply(dctx, c, id+1); err != nil {
			c.CloseNow()
			return nil, err
		}
	}
	return c, nil
}

// centrifugoAddr checks a Centrifugo address is host:port, without a
// scheme.
func centrifugoAddr(addr string) error {
	if strings.Contains(addr, "/") {
		return fmt.Errorf("loadtest: centrifugo address %q: want host:port", addr)
	}
	return nil
}
