package loadtest

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	rwclient "github.com/rankwire/rankwire/client"
)

// View kinds a fan-out subscription watches, in the order of the report.
var viewKinds = []string{"top", "around", "rank", "members"}

// scoreSlot is the width of a member's score range: member m<j> always
// scores in [j·scoreSlot, (j+1)·scoreSlot), so its rank never changes and a
// write changes only the views that show it. The offset in the slot is the
// submission's send time in µs modulo scoreSlot (1,000 s), so a subscriber
// can tell when a row it receives was sent. 1e6 members × 1e9 stays below
// 2^53: every score is an exact integer.
const scoreSlot = 1e9

// probeScore is member j's score for a submission sent at t.
func probeScore(j int, t time.Time) float64 {
	off := t.UnixMicro() % scoreSlot
	if off == 0 {
		off = 1 // 0 marks a preloaded score
	}
	return float64(j)*scoreSlot + float64(off)
}

// probeSent decodes the send time of a probe score received at recv; false
// for a preloaded score. The send time is the latest one at or before recv
// with that offset, so latencies up to 1,000 s decode correctly.
func probeSent(score float64, recv time.Time) (time.Time, bool) {
	off := slotOffset(score)
	if off <= 0 {
		return time.Time{}, false
	}
	r := recv.UnixMicro()
	back := ((r-off)%scoreSlot + scoreSlot) % scoreSlot
	return time.UnixMicro(r - back), true
}

// slotOffset is int64(math.Mod(score, scoreSlot)), in integer arithmetic
// where that is exact (an integer part below 2^53: every score the
// writers send) and several times cheaper: floor(x) mod m = floor(x mod m)
// for x ≥ 0 and an integer m.
func slotOffset(score float64) int64 {
	if score >= 0 && score < 1<<53 {
		return int64(score) % scoreSlot
	}
	return int64(math.Mod(score, scoreSlot))
}

// viewPlan assigns views to subscriptions: subscription i's kind follows
// the weights in rotation; a shared top-N for every top subscription, and
// for the others a member or rank of their own, spread over the board.
// Connection c of K subscriptions carries subscriptions c·K … c·K+K-1.
type viewPlan struct {
	Top, Around, Rank, Members int // weights
	Limit                      int // top-N
	Radius                     int // around
	BoardMembers               int // members m0 … m<n-1>
}

// viewSpec is one subscription's view, as the protocol spells it.
type viewSpec = rwclient.View

// optional is n for a view's limit or radius, or nil (the gateway's
// default) for 0.
func optional(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

// view returns subscription i's view and its kind's index in viewKinds.
func (p viewPlan) view(i int) (viewSpec, int) {
	w := []int{p.Top, p.Around, p.Rank, p.Members}
	total := p.Top + p.Around + p.Rank + p.Members
	k, r := 0, i%max(total, 1)
	for k < 3 && r >= w[k] {
		r -= w[k]
		k++
	}
	// spread: a member of subscription i's own, distinct for up to n subscriptions.
	n := max(p.BoardMembers, 1)
	j := int((uint64(i) * 2654435761) % uint64(n))
	switch k {
	case 0:
		return viewSpec{Kind: "top", Limit: optional(p.Limit)}, 0
	case 1:
		return viewSpec{Kind: "around", Member: "m" + strconv.Itoa(j), Radius: optional(p.Radius)}, 1
	case 2:
		return viewSpec{Kind: "rank", Rank: 1 + i%min(n, 1000)}, 2
	}
	ms := make([]string, 0, 10)
	for d := range min(10, n) {
		ms = append(ms, "m"+strconv.Itoa((j+d*(n/10+1))%n))
	}
	return viewSpec{Kind: "members", Members: ms}, 3
}

// maxPerConn is the most subscriptions the protocol allows on one
// connection (docs/PROTOCOL.md).
const maxPerConn = 100

// subID is the id of subscription j of a connection carrying perConn:
// "v" where a connection carries one (as before -per-conn), else "v<j>".
func subID(j, perConn int) string {
	if perConn <= 1 {
		return "v"
	}
	return "v" + strconv.Itoa(j)
}

// subIndex returns the j an id of subID's form names ("v" is 0), or
// false. It checks the form only: the caller compares the id itself.
// O(len(id)), no allocation.
func subIndex(id []byte) (int, bool) {
	if len(id) == 0 || len(id) > 4 || id[0] != 'v' {
		return 0, false
	}
	j := 0
	for _, c := range id[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		j = j*10 + int(c-'0')
	}
	return j, true
}

// wsConn is one WebSocket connection and its subscriptions. Every check
// is made per subscription: its place in the prev/seq chain, the scores it
// has seen, its since on a reconnect. Owned by one goroutine.
type wsConn struct {
	sdk    *rwclient.Client // dials and subscribes: the Go SDK's raw connection
	base   string           // the gateway's base URL
	board  string
	client *http.Client // dials from the worker's source address
	stats  *wsStats
	shard  int // of stats.shards: the connection's number mod statShards

	subs    []wsSub     // subscription j has id subs[j].id
	maxConn int         // reconnects allowed
	pace    *closePacer // spaces the closes at the stop; nil: at once
	buf     []byte      // the Redis peer's last payload; reused (the gateway's come from the SDK's reused buffer)
	msg     wsMessage   // the last message decoded; its rows are reused
}

// wsSub is one subscription's state on a wsConn.
type wsSub struct {
	id     string // subID(j, per connection)
	view   viewSpec
	kind   int       // view.Kind's index in viewKinds
	seq    uint64    // last seq applied; 0 before the first snapshot
	joined time.Time // when it was first subscribed
	seen   seenScores
	base   []byte // the last whole document of a Centrifugo delta subscription (centrifugo_delta.go)
}

// run connects (one dial at a time per slot of sem), subscribes and reads
// until ctx ends, reconnecting with since at most c.maxConn times after an
// unexpected close. Reconnects and closes count connections; a connection
// that gives up counts its subscriptions as failed.
func (c *wsConn) run(ctx context.Context, sem chan struct{}) {
	for attempt := 0; attempt <= c.maxConn && ctx.Err() == nil; attempt++ {
		if attempt > 0 {
			c.stats.reconnects.Add(1)
			sleep(ctx, time.Duration(100*attempt+rand.IntN(200))*time.Millisecond)
		}
		err := c.session(ctx, sem)
		if ctx.Err() != nil {
			return
		}
		c.stats.count(c.stats.closes, closeName(err))
	}
	if ctx.Err() == nil {
		c.stats.failed.Add(int64(len(c.subs)))
	}
}

func closeName(err error) string {
	if c := websocket.CloseStatus(err); c != -1 {
		return strconv.Itoa(int(c))
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return "net"
	}
	return "1006"
}

func (c *wsConn) session(ctx context.Context, sem chan struct{}) error {
	ws, err := c.dial(ctx, sem)
	if err != nil {
		return err
	}
	defer ws.CloseNow()
	n := int64(len(c.subs))
	c.stats.connections.Add(1)
	c.stats.connected.Add(n)
	defer c.stats.connections.Add(-1)
	defer c.stats.connected.Add(-n)
	// At the stop, leave with a close handshake (bounded by the library's
	// 5 s close timeouts) rather than a bare FIN: a cancelled Read would drop
	// the connection without one; at c.pace's turn (the reads go on until
	// then).
	stop := context.AfterFunc(ctx, func() { c.pace.wait(); ws.Close("rwload done") })
	defer stop()
	// For the same reason the reads get a context without Done, which also
	// spares coder/websocket arming a timer per read.
	rctx := context.WithoutCancel(ctx)
	for {
		data, err := ws.ReadRaw(rctx) // the buffer is reused: a message costs no allocation
		if err != nil {
			return err
		}
		c.handle(data, time.Now())
	}
}

// dial connects and sends the subscriptions (each with its since after a
// reconnect), holding a slot of sem so that a worker dials at a bounded
// rate.
func (c *wsConn) dial(ctx context.Context, sem chan struct{}) (*rwclient.Conn, error) {
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-sem }()
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ws, err := c.sdk.Dial(dctx, c.base, rwclient.DialOptions{HTTPClient: c.client, Timeout: 30 * time.Second})
	if err != nil {
		c.stats.dialErrors.Add(1)
		c.stats.nodeError(c.base, "dial: "+shortErr(err))
		return nil, err
	}
	for j := range c.subs {
		s := &c.subs[j]
		if s.joined.IsZero() {
			s.joined = time.Now()
		}
		if err := ws.Subscribe(dctx, s.id, c.board, "", s.view, s.seq); err != nil { // with since after a reconnect
			ws.CloseNow()
			return nil, err
		}
	}
	return ws, nil
}

// sub returns the subscription id names, or nil. No allocation.
func (c *wsConn) sub(id []byte) *wsSub {
	j, ok := subIndex(id)
	if !ok || j >= len(c.subs) || c.subs[j].id != string(id) {
		return nil
	}
	return &c.subs[j]
}

// handle checks one message's place in its subscription's prev/seq chain
// and records a latency sample for every row showing a submission that
// subscription has not seen before. A view message for an id the
// connection does not hold counts as error "id:unknown".
func (c *wsConn) handle(data []byte, recv time.Time) {
	c.counted(len(data))
	c.framed(len(data))
	m := &c.msg
	if err := decodeWSMessage(data, m); err != nil {
		c.stats.count(c.stats.errors, "decode")
		return
	}
	switch string(m.Type) {
	case "snapshot", "diff":
	case "heartbeat": // how the gateway stands for the tenant: nothing of a view
		sh := &c.stats.shards[c.shard]
		sh.heartbeats.Add(1)
		sh.heartbeatBytes.Add(int64(len(data)))
		sh.heartbeatWire.Add(int64(len(data) + frameHeader(len(data))))
		return
	case "error":
		c.stats.nodeError(c.base, "ws:"+string(m.Code))
		return
	default:
		c.stats.count(c.stats.errors, "type:"+string(m.Type))
		return
	}
	s := c.sub(m.ID)
	if s == nil {
		c.stats.count(c.stats.errors, "id:unknown")
		return
	}
	if string(m.Type) == "diff" && (s.seq == 0 || !m.HasPrev || m.Prev != s.seq) {
		c.stats.gaps.Add(1)
	}
	if s.seq == 0 && string(m.Type) == "snapshot" { // a reconnect resumes with since: seq stays set
		c.stats.viewed.Add(1)
	}
	s.seq = m.Seq
	for _, r := range m.Rows {
		c.observe(s, r.Member, r.Score, recv)
	}
}

// framed counts a WebSocket frame of an n-byte payload as it came on the
// wire: with its header from the server (unmasked: 2 bytes up to 125, 4 up
// to 65,535, else 10). A message that came in several frames counts as
// one: servers send small messages whole.
func (c *wsConn) framed(n int) {
	c.stats.shards[c.shard].wire.Add(int64(n + frameHeader(n)))
}

// frameHeader is the header's bytes of a server's (unmasked) frame of an
// n-byte payload.
func frameHeader(n int) int {
	switch {
	case n > 65535:
		return 10
	case n > 125:
		return 4
	}
	return 2
}

// counted counts a message of n bytes.
func (c *wsConn) counted(n int) {
	sh := &c.stats.shards[c.shard]
	sh.messages.Add(1)
	sh.bytes.Add(int64(n))
}

// observe records member's score the first time subscription s sees it.
// Probes sent before s began are not counted: its snapshot shows them,
// but they did not travel through the push path.
func (c *wsConn) observe(s *wsSub, member []byte, score float64, recv time.Time) {
	if !s.seen.update(member, score) {
		return
	}
	if sent, ok := probeSent(score, recv); ok && !sent.Before(s.joined) {
		sh := &c.stats.shards[c.shard]
		sh.hists[s.kind].Add(recv.Sub(sent))
		if d, ok := acks.afterAck(sent, recv); ok {
			sh.hists[afterAckHist].Add(d)
		}
	}
}

// seenMax bounds seenScores: a members view of 10 or an around of 11
// never reaches it.
const seenMax = 4096

// seenScores is the last score a subscription saw of each member. Its zero
// value is ready. Not safe for concurrent use.
type seenScores struct {
	// index maps a member to its score's place in scores, so that a new
	// score for a known member is stored without a map assignment, which
	// would allocate a string key (a lookup by string([]byte) does not).
	index  map[string]int32
	scores []float64
}

// update records member's score and reports whether it differs from the
// last one recorded, or is member's first. O(1); allocates only to add a
// member.
func (s *seenScores) update(member []byte, score float64) bool {
	if i, ok := s.index[string(member)]; ok {
		if s.scores[i] == score {
			return false
		}
		s.scores[i] = score
		return true
	}
	if s.index == nil {
		s.index = make(map[string]int32)
	}
	if len(s.scores) >= seenMax {
		clear(s.index) // keeps the map's memory for the members to come
		s.scores = s.scores[:0]
	}
	s.index[string(member)] = int32(len(s.scores))
	s.scores = append(s.scores, score)
	return true
}

// sourceClient returns an HTTP client for WebSocket dials whose
// connections leave from ip (a 127.0.0.0/8 address), so that each source
// address has its own range of ephemeral ports. An empty ip dials from the
// default address.
func sourceClient(ip string) *http.Client {
	d := &net.Dialer{Timeout: 30 * time.Second}
	if ip != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(ip)}
	}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableCompression: true}}
}

// shortErr names a dial error for the error table: its last clause, so
// that the same failure on many connections counts under one key.
func shortErr(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}
