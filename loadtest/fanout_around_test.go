package loadtest

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// board is n rows m<n-1> … m0 (best first), member j scoring j.
func boardRows(n int) []redis.Z {
	out := make([]redis.Z, n)
	for r := range out {
		j := n - 1 - r
		out[r] = redis.Z{Member: "m" + strconv.Itoa(j), Score: float64(j)}
	}
	return out
}

// window is the window the app reads around rank r of rows: 2·radius on
// either side, clipped to the board.
func window(rows []redis.Z, r, radius int64) aroundWindow {
	start := max(r-2*radius, 0)
	return aroundWindow{rank: r, start: start, rows: rows[start:min(r+2*radius+1, int64(len(rows)))]}
}

func decodeRows(t *testing.T, data []byte) []string {
	t.Helper()
	var msg redisTop
	if err := json.Unmarshal(data, &msg); err != nil {
		t.Fatalf("publication %s: %v", data, err)
	}
	var out []string
	for _, r := range msg.Rows {
		out = append(out, r.Member)
	}
	return out
}

// TestAffectedWatchers: a submission reaches exactly the watched members
// within radius of its rank, each once a batch, each with its own whole
// neighbourhood (clipped at the board's ends).
func TestAffectedWatchers(t *testing.T) {
	rows := boardRows(30) // rank r holds m<29-r>
	member := func(r int) string { return "m" + strconv.Itoa(29-r) }
	const radius = 2
	watched := map[string]string{}
	for _, r := range []int{0, 3, 10, 12, 13, 29} { // watchers at these ranks
		watched[member(r)] = "ch." + member(r)
	}
	neighbourhood := func(r int) []string {
		var out []string
		for p := max(r-radius, 0); p <= min(r+radius, 29); p++ {
			out = append(out, member(p))
		}
		return out
	}
	tests := []struct {
		name  string
		ranks []int64
		want  []int // the watchers' ranks, in order
	}{
		{"middle: three within radius", []int64{11}, []int{10, 12, 13}},
		{"the top: clipped at rank 0", []int64{1}, []int{0, 3}},
		{"the end: clipped at the last rank", []int64{28}, []int{29}},
		{"no watcher near", []int64{7}, nil},
		{"two submissions sharing watchers: each once", []int64{11, 12}, []int{10, 12, 13}},
		{"a watcher's own submission", []int64{3}, []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var wins []aroundWindow
			for _, r := range tt.ranks {
				wins = append(wins, window(rows, r, radius))
			}
			pubs := affectedWatchers(wins, radius, watched)
			if len(pubs) != len(tt.want) {
				t.Fatalf("%d publications, want %d: %v", len(pubs), len(tt.want), pubs)
			}
			for i, r := range tt.want {
				if pubs[i].channel != "ch."+member(r) {
					t.Errorf("publication %d to %s, want ch.%s", i, pubs[i].channel, member(r))
				}
				if got := decodeRows(t, pubs[i].data); !slices.Equal(got, neighbourhood(r)) {
					t.Errorf("rank %d's neighbourhood %v, want %v", r, got, neighbourhood(r))
				}
			}
		})
	}
}

// TestAroundAppSubmit runs the app on a real Redis: a batch of two
// submissions publishes, in one call, the neighbourhood of every watched
// member near either, with the new scores in it, and nothing to the
// others; it marks its acknowledgement before it publishes.
func TestAroundAppSubmit(t *testing.T) {
	rc := newRedis(startRedis(t), "", 2)
	defer rc.Close()
	ctx := context.Background()
	rs := &redisSink{rc: rc, key: "rwload:around"}
	if err := rs.preload(ctx, 100); err != nil { // rank r holds m<99-r>
		t.Fatal(err)
	}
	var calls [][]channelData
	var slot ackSlot // the app's acknowledgement: marked once Redis took the write, before the publish
	ctx = withAckSlot(ctx, &slot)
	app := &aroundApp{rc: rc, key: rs.key, radius: 5, publish: func(_ context.Context, pubs []channelData) error {
		if slot.at.IsZero() {
			t.Error("published before the acknowledgement was marked")
		}
		calls = append(calls, pubs)
		return nil
	}}
	app.watched = map[string]string{}
	for _, m := range []string{"m50", "m56", "m60", "m20"} {
		app.watched[m] = aroundChannel("b", m)
	}
	now := time.Now()
	items := []score{{Member: "m52", Score: probeScore(52, now)}, {Member: "m61", Score: probeScore(61, now)}}
	if n, class := app.submit(ctx, items); n != 2 || class != "" {
		t.Fatalf("submit: %d acknowledged, error %q", n, class)
	}
	if len(calls) != 1 {
		t.Fatalf("%d publish calls, want 1 a batch", len(calls))
	}
	// m52 is within 5 of m50 and m56; m61 of m56 and m60. m20 is far.
	var got []string
	for _, p := range calls[0] {
		got = append(got, p.channel)
		m := p.channel[len("rwload.around.b."):]
		j, _ := strconv.Atoi(m[1:])
		var want []string
		for k := j + 5; k >= j-5; k-- {
			want = append(want, "m"+strconv.Itoa(k))
		}
		if rows := decodeRows(t, p.data); !slices.Equal(rows, want) {
			t.Errorf("%s: rows %v, want %v", m, rows, want)
		}
		var msg redisTop
		json.Unmarshal(p.data, &msg)
		for _, r := range msg.Rows {
			if (r.Member == "m52" || r.Member == "m61") && slotOffset(r.Score) == 0 {
				t.Errorf("%s: %s without its new score", m, r.Member)
			}
		}
	}
	want := []string{aroundChannel("b", "m56"), aroundChannel("b", "m50"), aroundChannel("b", "m60")}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("published to %v, want %v", got, want)
	}
}

// TestFanoutCentrifugoAround runs 10 players, each watching its own
// around view, on "Redis + app + Centrifugo" (a stub of Centrifugo that
// routes by channel, a real Redis) for 2 s: every one subscribes, and the
// neighbourhoods the app publishes reach them and decode into around
// latency samples.
func TestFanoutCentrifugoAround(t *testing.T) {
	addr := startRedis(t)
	cf := centrifugoPubStub(t, "k")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := RunFanout(ctx, FanoutConfig{Target: Target{Board: "am" + strconv.Itoa(time.Now().Nanosecond())}, Redis: addr,
		Centrifugo: cf, CentrifugoKey: "k", Subscribers: 10, Around: 1, BoardMembers: 100, Rate: 200, Batch: 5, Writers: 2,
		Duration: 2 * time.Second, Drain: 300 * time.Millisecond, PID: os.Getpid()})
	if err != nil {
		t.Fatalf("RunFanout: %v", err)
	}
	t.Log(rep)
	if rep.Peer != "centrifugo" || rep.Mix != "around:1" || rep.Connected != 10 || rep.MessagesPerSec <= 0 || len(rep.WorkerErrors) > 0 || len(rep.WriteErrors) > 0 {
		t.Fatalf("peer %s, mix %s, connected %d, messages/s %.0f, worker errors %v, write errors %v", rep.Peer, rep.Mix, rep.Connected, rep.MessagesPerSec, rep.WorkerErrors, rep.WriteErrors)
	}
	if l := rep.Latency["around"]; l.Count == 0 || l.P50 <= 0 || l.Max > 5*time.Second {
		t.Errorf("around latency %v", l)
	}
	// In process, the app's acknowledgements pair with the receipts; the
	// app acknowledges after publishing, so most arrive no later.
	if l := rep.AfterAck; l == nil || l.Count == 0 || l.P50 > rep.All.P50 {
		t.Errorf("latency after the acknowledgement %v; from the send %v", l, rep.All)
	}
	if l, ok := rep.Latency["top"]; ok && l.Count > 0 {
		t.Errorf("top latency %v: no top view was watched", l)
	}
	if len(rep.Errors) > 0 || len(rep.Closes) > 0 {
		t.Errorf("errors %v, closes %v", rep.Errors, rep.Closes)
	}
	if rep.WriterCores <= 0 || rep.WriterCores > rep.ToolCores {
		t.Errorf("writer cores %.3f, tool cores %.3f", rep.WriterCores, rep.ToolCores)
	}
}

// TestCentrifugoPublishBatch: a batch goes in one request and reaches its
// channels; a command the server refuses, or the wrong key, is an error.
func TestCentrifugoPublishBatch(t *testing.T) {
	cf := centrifugoPubStub(t, "k")
	ctx := context.Background()
	pubs := []channelData{{"a.b", []byte(`{"rows":[]}`)}, {"p_1", []byte(`{"rows":[{"member":"m1","score":1}]}`)}}
	if err := newCentrifugoPublisher(cf, "k", "", 1).publishBatch(ctx, pubs); err != nil {
		t.Fatalf("a batch of two: %v", err)
	}
	if err := newCentrifugoPublisher(cf, "k", "", 1).publishBatch(ctx, nil); err != nil {
		t.Fatalf("an empty batch: %v", err)
	}
	if err := newCentrifugoPublisher(cf, "wrong", "", 1).publishBatch(ctx, pubs); err == nil {
		t.Error("the wrong key: no error")
	}
	bad := append(pubs, channelData{"ns:x", []byte(`{}`)})
	if err := newCentrifugoPublisher(cf, "k", "", 1).publishBatch(ctx, bad); err == nil {
		t.Error("a refused channel: no error")
	}
}
