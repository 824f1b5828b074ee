package loadtest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	rwclient "github.com/rankwire/rankwire/client"
)

// TestSubscriberHandle feeds one subscriber a sequence of messages and
// checks every count handle keeps: messages, bytes, gaps in the prev/seq
// chain, errors by kind, and one latency sample per new probe sent after
// the subscriber joined.
func TestSubscriberHandle(t *testing.T) {
	joined := time.UnixMicro(1_795_000_000_000_000)
	at := func(ms int) time.Time { return joined.Add(time.Duration(ms) * time.Millisecond) }
	row := func(j int, sent time.Time) string {
		return fmt.Sprintf(`{"rank":1,"member":"m%d","score":%s,"subscore":0}`, j, strconv.FormatFloat(probeScore(j, sent), 'f', -1, 64))
	}
	msgs := []struct {
		msg  string
		recv time.Time
	}{
		{`{"type":"diff","id":"v","seq":5,"prev":4,"total":9,"rows":[]}`, at(1)},                            // a diff before any snapshot: a gap
		{`{"type":"snapshot","id":"v","seq":7,"total":9,"rows":[` + row(1, at(-5)) + `]}`, at(2)},           // sent before the join: no sample
		{`{"type":"diff","id":"v","seq":9,"prev":7,"total":9,"rows":[` + row(1, at(3)) + `]}`, at(10)},      // 7 ms
		{`{"type":"diff","id":"v","seq":10,"prev":9,"total":9,"rows":[` + row(1, at(3)) + `]}`, at(12)},     // seen: no sample
		{`{"type":"diff","id":"v","seq":12,"prev":11,"total":9,"rows":[` + row(2, at(4)) + `]}`, at(24)},    // a gap; 20 ms
		{`{"type":"diff","id":"v","seq":13,"total":9,"rows":[{"member":"m3","score":3000000000}]}`, at(30)}, // no prev: a gap; preloaded score: no sample
		{`{"type":"error","id":"v","code":"bad_request","message":"x"}`, at(31)},
		{`{"type":"pong"}`, at(32)},
		{`{"type":`, at(33)},
	}
	stats := newWSStats()
	s := &wsConn{stats: stats, shard: 5, subs: []wsSub{{id: "v", kind: 2, joined: joined}}, base: "http://127.0.0.1:18123"}
	var size int64
	for _, m := range msgs {
		s.handle([]byte(m.msg), m.recv)
		size += int64(len(m.msg))
	}
	r := stats.report(true)
	if r.Messages != int64(len(msgs)) || r.Bytes != size || r.Gaps != 3 {
		t.Errorf("messages %d, bytes %d, gaps %d; want %d, %d, 3", r.Messages, r.Bytes, r.Gaps, len(msgs), size)
	}
	if want := "map[decode:1 type:pong:1 ws:bad_request:1]"; fmt.Sprint(r.Errors) != want {
		t.Errorf("errors %v, want %s", r.Errors, want)
	}
	if want := "map[127.0.0.1:18123 ws:bad_request:1]"; fmt.Sprint(r.ByNode) != want { // which gateway answered it
		t.Errorf("errors by node %v, want %s", r.ByNode, want)
	}
	var h Hist = Hist{Counts: newHist().Counts}
	h.merge(r.Hists[2])
	if l := h.Latency(); l.Count != 2 || l.Max != 20*time.Millisecond || l.P50 < 7*time.Millisecond || l.P50 > 7150*time.Microsecond {
		t.Errorf("rank latency %v, want 2 samples: 7 ms and 20 ms", l)
	}
	if s.subs[0].seq != 13 {
		t.Errorf("seq %d, want 13", s.subs[0].seq)
	}
}

// TestSeenScores checks seenScores against a map, with few enough members
// to repeat scores and enough to pass the bound.
func TestSeenScores(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	var s seenScores
	model := map[string]float64{}
	for i := range 50_000 {
		member, score := "m"+strconv.Itoa(r.IntN(seenMax+500)), float64(r.IntN(3))
		if i < 20_000 {
			member = "m" + strconv.Itoa(r.IntN(20)) // repeats, below the bound
		}
		old, ok := model[member]
		want := !ok || old != score
		if !ok && len(model) >= seenMax {
			clear(model)
		}
		model[member] = score
		if got := s.update([]byte(member), score); got != want {
			t.Fatalf("step %d: update(%s, %v) = %v, want %v", i, member, score, got, want)
		}
	}
}

func TestSlotOffset(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	scores := []float64{0, 1, scoreSlot - 1, scoreSlot, scoreSlot + 0.5, 1<<53 - 1, 1 << 53, 1e300, -1, -scoreSlot - 7, 0.25, math.Inf(1)}
	for range 10_000 {
		scores = append(scores, float64(r.Uint64N(1<<53)), r.Float64()*1e16, float64(r.Uint64N(1<<53))+0.5)
	}
	for _, x := range scores {
		if got, want := slotOffset(x), int64(math.Mod(x, scoreSlot)); got != want {
			t.Errorf("slotOffset(%v) = %d, want %d", x, got, want)
		}
	}
}

func TestParseFloat(t *testing.T) {
	for _, lit := range []string{"0", "-0", "7", "-7", "999999999999999", "-999999999999999", "9999999999999999",
		"99999123456789", "9007199254740993", "1.5", "-2.5e-3", "1e400", "123456789012345678901234567890"} {
		got, gotErr := parseFloat([]byte(lit))
		want, wantErr := strconv.ParseFloat(lit, 64)
		if math.Float64bits(got) != math.Float64bits(want) || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("parseFloat(%s) = %v, %v; want %v, %v", lit, got, gotErr, want, wantErr)
		}
	}
}

// TestConnHandleSubscriptions feeds one connection of three subscriptions
// interleaved messages and checks that every check is its subscription's
// own: the prev/seq chain, the scores seen, the join time, the kind's
// histogram; and that a view message for an id the connection does not
// hold counts as an error; a heartbeat counts as a message and apart.
func TestConnHandleSubscriptions(t *testing.T) {
	joined := time.UnixMicro(1_795_000_000_000_000)
	at := func(ms int) time.Time { return joined.Add(time.Duration(ms) * time.Millisecond) }
	row := func(j int, sent time.Time) string {
		return fmt.Sprintf(`{"rank":1,"member":"m%d","score":%s,"subscore":0}`, j, strconv.FormatFloat(probeScore(j, sent), 'f', -1, 64))
	}
	msg := func(typ, id string, seq, prev int, rows ...string) string {
		p := ""
		if prev > 0 {
			p = `"prev":` + strconv.Itoa(prev) + `,`
		}
		return fmt.Sprintf(`{"type":%q,"id":%q,"seq":%d,%s"total":9,"rows":[%s]}`, typ, id, seq, p, strings.Join(rows, ","))
	}
	const beat = `{"type":"heartbeat","seq":13,"writable":true,"stale":false,"at":"2026-11-27T01:02:03.456Z"}`
	msgs := []struct {
		msg  string
		recv time.Time
	}{
		{msg("snapshot", "v0", 7, 0, row(1, at(1))), at(5)},              // top: 4 ms
		{msg("snapshot", "v1", 3, 0, row(1, at(1))), at(6)},              // v1 joined at 2 ms: no sample
		{msg("diff", "v2", 8, 7, row(2, at(10))), at(30)},                // before v2's snapshot: a gap; rank: 20 ms
		{msg("diff", "v0", 9, 7, row(1, at(1))), at(31)},                 // v0 saw it: no sample
		{msg("diff", "v1", 9, 3, row(1, at(1)), row(4, at(20))), at(31)}, // m1 seen (and before v1 joined); m4: 11 ms
		{msg("diff", "v1", 12, 7, row(2, at(10))), at(40)},               // v1 is at 9, not 7: a gap; 30 ms
		{msg("diff", "v0", 12, 9, row(2, at(10))), at(41)},               // m2 new to v0: 31 ms
		{msg("diff", "v3", 13, 12), at(42)},                              // no subscription v3
		{msg("diff", "v", 13, 12), at(42)},                               // nor v: this connection names its subscriptions v<j>
		{msg("diff", "v00", 13, 12), at(42)},
		{`{"type":"snapshot","seq":13,"total":9,"rows":[]}`, at(42)}, // no id
		{`{"type":"error","id":null,"code":"bad_json","message":"x"}`, at(43)},
		{beat, at(44)}, // a message, counted apart too
	}
	stats := newWSStats()
	c := &wsConn{stats: stats, shard: 3, subs: []wsSub{
		{id: "v0", kind: 0, joined: joined},
		{id: "v1", kind: 1, joined: at(2)},
		{id: "v2", kind: 2, joined: joined},
	}}
	var size int64
	for _, m := range msgs {
		c.handle([]byte(m.msg), m.recv)
		size += int64(len(m.msg))
	}
	r := stats.report(true)
	if r.Messages != int64(len(msgs)) || r.Bytes != size || r.Gaps != 2 {
		t.Errorf("messages %d, bytes %d, gaps %d; want %d, %d, 2", r.Messages, r.Bytes, r.Gaps, len(msgs), size)
	}
	if r.Heartbeats != 1 || r.HeartbeatBytes != int64(len(beat)) || r.HeartbeatWire != int64(len(beat)+2) {
		t.Errorf("heartbeats %d of %d B in %d B of frames; want 1 of %d B in %d", r.Heartbeats, r.HeartbeatBytes, r.HeartbeatWire, len(beat), len(beat)+2)
	}
	if want := "map[id:unknown:4 ws:bad_json:1]"; fmt.Sprint(r.Errors) != want {
		t.Errorf("errors %v, want %s", r.Errors, want)
	}
	want := [][]time.Duration{{4 * time.Millisecond, 31 * time.Millisecond}, {11 * time.Millisecond, 30 * time.Millisecond}, {20 * time.Millisecond}, nil}
	for k, w := range want {
		var h Hist = Hist{Counts: newHist().Counts}
		h.merge(r.Hists[k])
		l := h.Latency()
		if l.Count != len(w) || len(w) > 0 && (l.Max != w[len(w)-1] || l.P50 < w[0] || float64(l.P50) > 1.02*float64(w[0])) {
			t.Errorf("%s latency %v, want samples %v", viewKinds[k], l, w)
		}
	}
	for j, seq := range []uint64{12, 12, 8} {
		if c.subs[j].seq != seq {
			t.Errorf("%s: seq %d, want %d", c.subs[j].id, c.subs[j].seq, seq)
		}
	}
}

func TestSubID(t *testing.T) {
	for _, k := range []int{1, 2, 4, 100} {
		for j := range k {
			id := subID(j, k)
			if got, ok := subIndex([]byte(id)); !ok || got != j {
				t.Errorf("subIndex(subID(%d, %d) = %q) = %d, %v", j, k, id, got, ok)
			}
		}
	}
	if subID(0, 1) != "v" || subID(0, 2) != "v0" || subID(99, 100) != "v99" {
		t.Errorf("ids %q %q %q, want v v0 v99", subID(0, 1), subID(0, 2), subID(99, 100))
	}
	for _, id := range []string{"", "w", "V1", "v-1", "v1 ", " v1", "v1x", "v12345", "vv"} {
		if j, ok := subIndex([]byte(id)); ok {
			t.Errorf("subIndex(%q) = %d, want false", id, j)
		}
	}
	c := &wsConn{subs: []wsSub{{id: "v0"}, {id: "v1"}}}
	for id, want := range map[string]int{"v0": 0, "v1": 1, "v": -1, "v00": -1, "v01": -1, "v2": -1, "v9999": -1} {
		got := -1
		if s := c.sub([]byte(id)); s != nil {
			got = int(s.id[1] - '0')
		}
		if got != want {
			t.Errorf("sub(%q) = subscription %d, want %d", id, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { c.sub([]byte("v1")) }); n != 0 {
		t.Errorf("sub: %v allocations, want 0", n)
	}
}

// TestConnResubscribe drops a connection of three subscriptions after
// each has applied a message, and checks that it reconnects once and
// resubscribes each with its own since.
func TestConnResubscribe(t *testing.T) {
	type subscribe struct {
		Type  string   `json:"type"`
		ID    string   `json:"id"`
		View  viewSpec `json:"view"`
		Since *uint64  `json:"since"`
	}
	sessions := make(chan []subscribe, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		var subs []subscribe
		for len(subs) < 3 {
			var s subscribe
			if err := wsjson.Read(r.Context(), c, &s); err != nil {
				return
			}
			if s.Type == "auth" {
				continue // the SDK authenticates first
			}
			subs = append(subs, s)
		}
		sessions <- subs
		if subs[0].Since != nil { // the second session: stay until the client leaves
			c.Read(r.Context())
			return
		}
		for _, m := range []string{
			`{"type":"snapshot","id":"v0","seq":10,"total":0,"rows":[]}`,
			`{"type":"snapshot","id":"v1","seq":11,"total":0,"rows":[]}`,
			`{"type":"snapshot","id":"v2","seq":12,"total":0,"rows":[]}`,
			`{"type":"diff","id":"v1","seq":20,"prev":11,"total":0,"rows":[]}`,
		} {
			if c.Write(r.Context(), websocket.MessageText, []byte(m)) != nil {
				return
			}
		}
		c.Close(websocket.StatusTryAgainLater, "drop")
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stats := newWSStats()
	sdk, err := rwclient.New([]string{srv.URL}, rwclient.WithToken("t"))
	if err != nil {
		t.Fatal(err)
	}
	c := &wsConn{sdk: sdk, base: srv.URL, board: "b", client: srv.Client(), stats: stats, maxConn: 1}
	for j, k := range []string{"top", "rank", "around"} {
		c.subs = append(c.subs, wsSub{id: subID(j, 3), view: viewSpec{Kind: k}})
	}
	done := make(chan struct{})
	go func() { c.run(ctx, make(chan struct{}, 1)); close(done) }()
	var got [2][]subscribe
	for i := range got {
		select {
		case got[i] = <-sessions:
		case <-ctx.Done():
			t.Fatalf("session %d: no subscriptions", i+1)
		}
	}
	cancel()
	<-done
	for i, wantSince := range [][]uint64{{0, 0, 0}, {10, 20, 12}} {
		for j, s := range got[i] {
			since := uint64(0)
			if s.Since != nil {
				since = *s.Since
			}
			if s.ID != c.subs[j].id || s.View.Kind != c.subs[j].view.Kind || since != wantSince[j] {
				t.Errorf("session %d, subscription %d: %+v since %d; want %s, %s since %d",
					i+1, j, s, since, c.subs[j].id, c.subs[j].view.Kind, wantSince[j])
			}
		}
	}
	r := stats.report(true)
	if r.Reconnects != 1 || r.Gaps != 0 || len(r.Errors) > 0 || fmt.Sprint(r.Closes) != "map[1013:1]" {
		t.Errorf("reconnects %d, gaps %d, errors %v, closes %v; want 1, 0, none, 1013 once", r.Reconnects, r.Gaps, r.Errors, r.Closes)
	}
	if r.Connected != 0 || r.Connections != 0 || r.Failed != 0 {
		t.Errorf("after the stop: connected %d on %d connections, failed %d; want 0", r.Connected, r.Connections, r.Failed)
	}
}
