package loadtest

import (
	"bytes"
	"context"
	"errors"
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
	s := &wsSubscriber{stats: stats, kind: 2, shard: 5, joined: joined}
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
	var h Hist = Hist{Counts: newHist().Counts}
	h.merge(r.Hists[2])
	if l := h.Latency(); l.Count != 2 || l.Max != 20*time.Millisecond || l.P50 < 7*time.Millisecond || l.P50 > 7150*time.Microsecond {
		t.Errorf("rank latency %v, want 2 samples: 7 ms and 20 ms", l)
	}
	if s.seq != 13 {
		t.Errorf("seq %d, want 13", s.seq)
	}
}

// TestSubscriberRead sends messages of many sizes over a real WebSocket
// and checks that read returns each whole, with its buffer reused, and
// that a message over the read limit ends the connection.
func TestSubscriberRead(t *testing.T) {
	sizes := []int{0, 1, 1023, 1024, 1025, 5000, readKeep + 1, 700, 3 << 20}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for _, n := range sizes {
			if c.Write(r.Context(), websocket.MessageText, message(n)) != nil {
				return
			}
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	var s wsSubscriber
	for _, n := range sizes[:len(sizes)-1] {
		got, err := s.read(ctx, c)
		if err != nil || !bytes.Equal(got, message(n)) {
			t.Fatalf("read of %d bytes: %d bytes, %v", n, len(got), err)
		}
		if cap(s.buf) > readKeep {
			t.Errorf("after %d bytes the subscriber keeps a buffer of %d", n, cap(s.buf))
		}
	}
	if _, err := s.read(ctx, c); !errors.Is(err, websocket.ErrMessageTooBig) {
		t.Errorf("read of 3 MiB with a 1 MiB limit: %v", err)
	}
}

// message is n bytes of a recognisable pattern.
func message(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
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
