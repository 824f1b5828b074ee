package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// The Centrifugo peer is "Redis + app + Centrifugo": the writers are the
// app, which keeps the board in a Redis sorted set and publishes through
// Centrifugo's server API (its API key in X-API-Key); every subscriber is a
// Centrifugo client (JSON protocol over WebSocket: connect, subscribe to
// its view's channel) that receives the full state on every change. Three
// families of views exist, one a run: the shared top N (ZADD, read the top
// N back, and where it changed POST /api/publish of the whole top N to the
// board's channel); a player's own around view (fanout_around.go: each
// player's neighbourhood published to the player's channel); and rank
// lines and members views (fanout_views.go: each on a channel of its
// own). The latency probe is
// the same as the gateway's: the send time rides in the score (see
// scoreSlot).

// errCentrifugoRedis: the app keeps its board in Redis.
var errCentrifugoRedis = errors.New("loadtest: the Centrifugo peer needs -redis: the app's sorted set")

// errCentrifugoViews: the app publishes a shared top N, or each player's
// around view, or rank lines and members views: one of the three per run.
var errCentrifugoViews = errors.New("loadtest: the Centrifugo peer takes top views, around views, or rank and members views: one of the three a run")

// centrifugoFamilies is how many of the app's three families of views
// (top; around; rank and members) c's weights ask for.
func centrifugoFamilies(c FanoutConfig) int {
	n := 0
	for _, w := range []int{c.Top, c.Around, c.Rank + c.MembersViews} {
		if w > 0 {
			n++
		}
	}
	return n
}

// centrifugoPublisher posts to Centrifugo's server API.
type centrifugoPublisher struct {
	hc      *http.Client
	api     string // http://host:port/api
	key     string // X-API-Key
	channel string // publish's
	// lobby, where set, are the channels publish broadcasts to instead
	// of channel (POST /api/broadcast: a connection of a lobby holds one
	// subscription to each, as a channel is subscribed once per
	// connection).
	lobby []string
	// delta asks Centrifugo for a fossil delta against the channel's
	// previous publication ("delta": true) for every subscriber that
	// negotiated one.
	delta bool
}

func newCentrifugoPublisher(addr, key, channel string, pool int) *centrifugoPublisher {
	tr := &http.Transport{MaxIdleConnsPerHost: pool, MaxConnsPerHost: pool}
	return &centrifugoPublisher{hc: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		api: "http://" + addr + "/api", key: key, channel: channel}
}

// publish sends data (a JSON document) to the publisher's channel, or
// broadcasts it to its lobby's channels; Centrifugo's error reply is an
// error.
func (p *centrifugoPublisher) publish(ctx context.Context, data []byte) error {
	body := make([]byte, 0, len(data)+64)
	if len(p.lobby) > 0 {
		return p.post(ctx, "/broadcast", appendBroadcast(body, p.lobby, data, p.delta))
	}
	body = appendPublish(body, p.channel, data, p.delta)
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
		body = appendPublish(append(body, `{"publish":`...), pub.channel, pub.data, p.delta)
		body = append(body, '}')
	}
	return p.post(ctx, "/batch", append(body, "]}"...))
}

// appendPublish appends a publish command's body: the channel and data
// (JSON already), and "delta": true where delta.
func appendPublish(b []byte, channel string, data []byte, delta bool) []byte {
	b = appendJSONString(append(b, `{"channel":`...), channel)
	return appendDataDelta(b, data, delta)
}

// appendBroadcast appends a broadcast command's body: the channels and
// data (JSON already), and "delta": true where delta.
func appendBroadcast(b []byte, channels []string, data []byte, delta bool) []byte {
	b = append(b, `{"channels":[`...)
	for i, ch := range channels {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, ch)
	}
	return appendDataDelta(append(b, ']'), data, delta)
}

func appendDataDelta(b, data []byte, delta bool) []byte {
	b = append(append(b, `,"data":`...), data...)
	if delta {
		b = append(b, `,"delta":true`...)
	}
	return append(b, '}')
}

// subscribeCommand is the client's command id: subscribe to channel,
// asking for fossil deltas where delta (the channel must allow them:
// allowed_delta_types).
func subscribeCommand(id int, channel string, delta bool) []byte {
	b := append(strconv.AppendInt([]byte(`{"id":`), int64(id), 10), `,"subscribe":{"channel":`...)
	b = appendJSONString(b, channel)
	if delta {
		b = append(b, `,"delta":"fossil"`...)
	}
	return append(b, "}}"...)
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
// Centrifugo at cfg.URL (its host:port), cfg.PerConn to a connection, each
// on its view's channel: the board's for a top view (on a lobby, one of
// the board's lobby channels a connection, centrifugoChannel), its
// member's for an around view. They run until ctx ends; wg waits for them.
func runCentrifugoSubscribers(ctx context.Context, cfg workerConfig, stats *wsStats, sem chan struct{}, wg *sync.WaitGroup) error {
	if err := checkLoopback("http://" + cfg.URL); err != nil {
		return err
	}
	hc := sourceClient(cfg.SrcIP)
	u := "ws://" + cfg.URL + "/connection/websocket"
	k := max(cfg.PerConn, 1)
	for from := cfg.From; from < cfg.To; from += k {
		c := &wsConn{stats: stats, shard: from / k % statShards}
		for i := from; i < min(from+k, cfg.To); i++ {
			v, kind := cfg.Plan.view(i)
			c.subs = append(c.subs, wsSub{id: centrifugoChannel(cfg.Board, v, kind, i-from, k), kind: kind})
		}
		wg.Go(func() { c.runCentrifugo(ctx, hc, u, cfg.Delta, sem) })
	}
	return nil
}

// centrifugoChannel is the channel of subscription j of a connection
// carrying perConn: a member's own for an around view, the rank's for a
// rank line, the member list's for a members view; for a top view the
// board's, or on a lobby (perConn above 1) the board's lobby channel j
// (centrifugoLobby), since Centrifugo lets a connection subscribe to a
// channel once.
func centrifugoChannel(board string, v viewSpec, kind, j, perConn int) string {
	switch {
	case kind == 1:
		return aroundChannel(board, v.Member)
	case kind == 2:
		return rankChannel(board, v.Rank)
	case kind == 3:
		return membersChannel(board, v.Members)
	case perConn > 1:
		return redisChannel(board) + "." + strconv.Itoa(j)
	}
	return redisChannel(board)
}

// centrifugoLobby is the channels the app broadcasts a board's top N to
// where connections carry perConn subscriptions: those of
// centrifugoChannel; nil for one.
func centrifugoLobby(board string, perConn int) []string {
	if perConn <= 1 {
		return nil
	}
	out := make([]string, perConn)
	for j := range out {
		out[j] = centrifugoChannel(board, viewSpec{}, 0, j, perConn)
	}
	return out
}

// runCentrifugo is a connection with its subscriptions, each sub's id its
// channel; with delta, each asks for fossil deltas.
func (c *wsConn) runCentrifugo(ctx context.Context, hc *http.Client, u string, delta bool, sem chan struct{}) {
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	channels := make([]string, len(c.subs))
	for j := range c.subs {
		channels[j] = c.subs[j].id
	}
	ws, err := centrifugoJoin(ctx, hc, u, delta, channels...)
	<-sem
	if err != nil {
		c.stats.dialErrors.Add(1)
		c.stats.failed.Add(int64(len(c.subs)))
		c.stats.count(c.stats.errors, "centrifugo join: "+shortErr(err))
		return
	}
	defer ws.CloseNow()
	n := int64(len(c.subs))
	for j := range c.subs {
		c.subs[j].joined = time.Now()
	}
	c.stats.connected.Add(n)
	c.stats.connections.Add(1)
	defer c.stats.connected.Add(-n)
	defer c.stats.connections.Add(-1)
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.stats.count(c.stats.closes, "centrifugo:"+shortErr(err))
			}
			return
		}
		c.framed(len(data))
		c.centrifugoFrame(ctx, ws, data, time.Now())
	}
}

// centrifugoFrame handles one frame: newline-separated replies and pushes
// (Centrifugo batches a connection's pending ones into a frame). A ping
// ({}) is answered with a pong; a publication counts as a message and its
// rows are observed by its channel's subscription; an unsubscribe push
// (Centrifugo found the subscription behind: "insufficient state") counts
// as a close.
func (c *wsConn) centrifugoFrame(ctx context.Context, ws *websocket.Conn, data []byte, now time.Time) {
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		switch {
		case len(line) == 0:
		case string(line) == "{}":
			_ = ws.Write(ctx, websocket.MessageText, []byte("{}"))
		case bytes.HasPrefix(line, []byte(`{"push":`)):
			s := c.centrifugoSub(line)
			if s == nil {
				c.stats.count(c.stats.errors, "centrifugo:channel")
				continue
			}
			if !bytes.Contains(line, []byte(`"pub":`)) {
				if bytes.Contains(line, []byte(`"unsubscribe":`)) {
					c.stats.count(c.stats.closes, "centrifugo:unsubscribe")
				}
				continue
			}
			c.counted(len(line))
			doc, delta, err := s.centrifugoDoc(line)
			if delta {
				sh := &c.stats.shards[c.shard]
				sh.deltas.Add(1)
				sh.deltaBytes.Add(int64(len(line)))
			}
			if err != nil || decodeWSMessage(doc, &c.msg) != nil {
				c.stats.count(c.stats.errors, "decode")
				continue
			}
			for _, r := range c.msg.Rows {
				c.observe(s, r.Member, r.Score, now)
			}
		}
	}
}

// centrifugoSub is the subscription a push line's channel names, or nil.
func (c *wsConn) centrifugoSub(line []byte) *wsSub {
	const key = `"channel":"`
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return nil
	}
	rest := line[i+len(key):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return nil
	}
	for j := range c.subs {
		if c.subs[j].id == string(rest[:end]) {
			return &c.subs[j]
		}
	}
	return nil
}

// centrifugoData is the publication's data in a push line: the JSON value
// after its "data" key (the app publishes an object of rows; the JSON
// protocol embeds it as it was sent, or as a JSON string on a delta
// subscription), and the line outside it.
func centrifugoData(line []byte) (data, before, after []byte, ok bool) {
	i := bytes.Index(line, []byte(`"data":`))
	if i < 0 {
		return nil, nil, nil, false
	}
	d := jsonScanner{data: line, off: i + len(`"data":`)}
	d.space()
	start := d.off
	if d.skip(3) != nil {
		return nil, nil, nil, false
	}
	return line[start:d.off], line[:i], line[d.off:], true
}

// centrifugoJoin dials u, connects (no token: the server runs in insecure
// client mode) and subscribes to each channel (asking for fossil deltas
// where delta), waiting for every reply.
func centrifugoJoin(ctx context.Context, hc *http.Client, u string, delta bool, channels ...string) (*websocket.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	cmds := [][]byte{[]byte(`{"id":1,"connect":{"name":"rwload"}}`)}
	for j, ch := range channels {
		cmds = append(cmds, subscribeCommand(j+2, ch, delta))
	}
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
