package loadtest

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestChangedLines: a move changes the watched rank lines between its two
// ranks, both included, whichever way it goes; a member new to the board
// every line from its rank to the end; each line once, ascending.
func TestChangedLines(t *testing.T) {
	ranks := []int64{0, 4, 9, 10, 99}
	tests := []struct {
		name  string
		moves []rankMove
		want  []int64
	}{
		{"a score in place: its own line", []rankMove{{9, 9}}, []int64{9}},
		{"in place, unwatched", []rankMove{{5, 5}}, nil},
		{"up: every line between", []rankMove{{10, 3}}, []int64{4, 9, 10}},
		{"down: the same", []rankMove{{3, 10}}, []int64{4, 9, 10}},
		{"new to the board: to the end", []rankMove{{-1, 5}}, []int64{9, 10, 99}},
		{"two moves sharing lines: each once", []rankMove{{0, 4}, {4, 9}}, []int64{0, 4, 9}},
		{"past every watched line", []rankMove{{100, 200}}, nil},
	}
	for _, tt := range tests {
		if got := changedLines(ranks, tt.moves); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// decodeViewRows is a publication's rows as "rank:member".
func decodeViewRows(t *testing.T, data []byte) []string {
	t.Helper()
	var msg struct {
		Rows []viewRow `json:"rows"`
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		t.Fatalf("publication %s: %v", data, err)
	}
	var out []string
	for _, r := range msg.Rows {
		out = append(out, strconv.FormatInt(r.Rank, 10)+":"+r.Member)
	}
	return out
}

// TestViewsAppSubmit runs the app on a real Redis (rank r, 1-based, holds
// m<100-r>): a batch publishes, in one call, the rank lines it changed
// (the mover's and every line it pushed) and the members views holding a
// submitted member, whole, rows in rank order with their ranks and new
// scores; nothing to the others.
func TestViewsAppSubmit(t *testing.T) {
	rc := newRedis(startRedis(t), "", 2)
	defer rc.Close()
	ctx := context.Background()
	rs := &redisSink{rc: rc, key: "rwload:views"}
	if err := rs.preload(ctx, 100); err != nil {
		t.Fatal(err)
	}
	plan := viewPlan{Rank: 1, Members: 1, BoardMembers: 100}
	var calls [][]channelData
	app := newViewsApp(rc, rs.key, "b", plan, 40, func(_ context.Context, pubs []channelData) error {
		calls = append(calls, pubs)
		return nil
	})
	if len(app.ranks) != 20 || len(app.views) != 20 {
		t.Fatalf("%d rank lines and %d members views watched, want 20 and 20", len(app.ranks), len(app.views))
	}
	// A members view whose third member ranks below 20, away from the
	// move below.
	i := slices.IndexFunc(app.views, func(v membersView) bool { return memberIndex(v.members[2]) < 80 })
	mv := app.views[i]
	j := memberIndex(mv.members[2])
	now := time.Now()
	items := []score{
		{Member: mv.members[2], Score: probeScore(j, now)}, // in its slot: its rank stays
		{Member: "m90", Score: probeScore(96, now)},        // rank 10 → 4: lines 4…10 change
	}
	if n, class := app.submit(ctx, items); n != 2 || class != "" {
		t.Fatalf("submit: %d acknowledged, error %q", n, class)
	}
	if len(calls) != 1 {
		t.Fatalf("%d publish calls, want 1 a batch", len(calls))
	}
	got := map[string][]string{}
	for _, p := range calls[0] {
		got[p.channel] = decodeViewRows(t, p.data)
	}
	// The watched lines are ranks 1, 3, …, 39 (subscription 2k watches
	// rank 2k+1). m90 now ranks 4 (after m97); m96…m91 moved down one.
	want := map[string][]string{
		rankChannel("b", 5): {"5:m96"}, rankChannel("b", 7): {"7:m94"}, rankChannel("b", 9): {"9:m92"},
	}
	if r := 100 - j; r%2 == 1 && r < 40 {
		want[rankChannel("b", r)] = []string{strconv.Itoa(r) + ":" + mv.members[2]}
	}
	for k := range 40 { // every members view holding a submitted member, whole
		if v, kind := plan.view(k); kind == 3 && (slices.Contains(v.Members, "m90") || slices.Contains(v.Members, mv.members[2])) {
			var rows []string
			for _, m := range v.Members {
				r := 100 - memberIndex(m)
				if 90 < memberIndex(m) && memberIndex(m) <= 96 {
					r++ // pushed down by m90
				} else if m == "m90" {
					r = 4
				}
				rows = append(rows, strconv.Itoa(r)+":"+m)
			}
			slices.SortFunc(rows, func(x, y string) int { return rankOf(x) - rankOf(y) })
			want[membersChannel("b", v.Members)] = rows
		}
	}
	if _, ok := want[mv.channel]; !ok {
		t.Fatalf("members view %v not among those expected", mv.members)
	}
	for ch, rows := range want {
		if !slices.Equal(got[ch], rows) {
			t.Errorf("%s: %v, want %v", ch, got[ch], rows)
		}
	}
	for ch := range got {
		if _, ok := want[ch]; !ok {
			t.Errorf("published to %s: no submission changed it", ch)
		}
	}
}

func memberIndex(m string) int {
	j, _ := strconv.Atoi(strings.TrimPrefix(m, "m"))
	return j
}

// rankOf is a "rank:member" row's rank.
func rankOf(row string) int {
	r, _, _ := strings.Cut(row, ":")
	n, _ := strconv.Atoi(r)
	return n
}

// TestFanoutCentrifugoViews runs rank lines and members views on "Redis +
// app + Centrifugo" (a stub of Centrifugo that routes by channel, a real
// Redis) for 2 s: every subscription subscribes, and the views the app
// publishes reach them and decode into rank and members latency samples.
func TestFanoutCentrifugoViews(t *testing.T) {
	addr := startRedis(t)
	cf := centrifugoPubStub(t, "k")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := RunFanout(ctx, FanoutConfig{Target: Target{Board: "vw" + strconv.Itoa(time.Now().Nanosecond())}, Redis: addr,
		Centrifugo: cf, CentrifugoKey: "k", Subscribers: 20, Rank: 1, MembersViews: 1, BoardMembers: 20, Rate: 100, Batch: 5,
		Writers: 2, Duration: 2 * time.Second, Drain: 300 * time.Millisecond, PID: os.Getpid()})
	if err != nil {
		t.Fatalf("RunFanout: %v", err)
	}
	t.Log(rep)
	if rep.Peer != "centrifugo" || rep.Mix != "rank:1,members:1" || rep.Connected != 20 || rep.MessagesPerSec <= 0 || len(rep.WorkerErrors)+len(rep.WriteErrors) > 0 {
		t.Fatalf("peer %s, mix %s, connected %d, messages/s %.0f, worker errors %v, write errors %v", rep.Peer, rep.Mix, rep.Connected, rep.MessagesPerSec, rep.WorkerErrors, rep.WriteErrors)
	}
	for _, kind := range []string{"rank", "members"} {
		if l := rep.Latency[kind]; l.Count == 0 || l.Max > 5*time.Second {
			t.Errorf("%s latency %v", kind, l)
		}
	}
	if len(rep.Errors) > 0 || len(rep.Closes) > 0 {
		t.Errorf("errors %v, closes %v", rep.Errors, rep.Closes)
	}
}

// TestCentrifugoViewsDelta runs rank lines and members views against a
// real Centrifugo with the delta option and a real Redis: every
// subscription joins, deltas come and apply (a wrong one would be a decode
// error), and a delta's push line is smaller than a whole one's. Skips without
// Centrifugo (startCentrifugo) or redis-server.
func TestCentrifugoViewsDelta(t *testing.T) {
	addr := startRedis(t)
	cf := startCentrifugo(t, "k")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := RunFanout(ctx, FanoutConfig{Target: Target{Board: "vd"}, Redis: addr, Centrifugo: cf, CentrifugoKey: "k",
		CentrifugoDelta: true, Subscribers: 10, Rank: 1, MembersViews: 1, BoardMembers: 20, Rate: 50, Batch: 1, Writers: 1,
		Duration: 2 * time.Second, Drain: 300 * time.Millisecond})
	if err != nil {
		t.Fatalf("RunFanout: %v", err)
	}
	t.Log(rep)
	if rep.Connected != 10 || rep.MessagesPerSec <= 0 || len(rep.WorkerErrors)+len(rep.WriteErrors) > 0 || len(rep.Errors)+len(rep.Closes) > 0 {
		t.Fatalf("connected %d, messages/s %.0f, worker errors %v, write errors %v, errors %v, closes %v",
			rep.Connected, rep.MessagesPerSec, rep.WorkerErrors, rep.WriteErrors, rep.Errors, rep.Closes)
	}
	if rep.DeltasPerSec <= 0 || rep.DeltasPerSec > rep.MessagesPerSec {
		t.Fatalf("%.0f of %.0f messages/s came as deltas", rep.DeltasPerSec, rep.MessagesPerSec)
	}
	if l := rep.Latency["members"]; l.Count == 0 {
		t.Errorf("members latency %v", l)
	}
	delta := rep.DeltaBytesPerSec / rep.DeltasPerSec
	if wholes := rep.MessagesPerSec - rep.DeltasPerSec; wholes > 0 {
		if whole := (rep.BytesPerSec - rep.DeltaBytesPerSec) / wholes; delta >= whole {
			t.Errorf("a delta's push line %.0f B, a whole one's %.0f B: want the delta smaller", delta, whole)
		}
	}
}
