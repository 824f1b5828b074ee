package client_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/client"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/live"
)

// TestWatchSaysHowItGotThere: ViewState's Snapshot, Prev and Resumed tell
// a caller how Watch got to each state. The first state is a snapshot; a
// change on the same connection a diff whose Prev is the Seq before; after
// the first gateway goes silent, the first state from the other is
// Resumed, and a diff from the seq held where that gateway kept the
// board-window's changes (another watcher of the view there), else a
// snapshot (nobody watched it there).
func TestWatchSaysHowItGotThere(t *testing.T) {
	for _, tt := range []struct {
		name     string
		kept     bool // a watcher on the second gateway: it keeps the changes
		snapshot bool // the resume's answer is a snapshot
	}{
		{"kept: the chain goes on", true, false},
		{"not kept: a snapshot", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, b := startPair(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			submit := func(member string, score float64) {
				t.Helper()
				if _, err := b.client(t, "t1", "k1", auth.RoleAdmin).Submit(ctx, "s", client.Score{Member: member, Score: score}); err != nil {
					t.Fatal(err)
				}
			}
			submit("a", 1)
			awaitScore(t, a, "a", 1) // else a's first snapshot may come before it applied a: seq 0, empty
			if tt.kept {
				startWatcher(ctx, t, newClient(t, b, b.URL())).waitTop("the keeper's first state", "a")
			}
			p := startProxy(t, a.Addr)
			w := startWatcher(ctx, t, newClient(t, a, p.URL(), b.URL()),
				client.WatchReadTimeout(600*time.Millisecond), client.WatchBackoff(20*time.Millisecond, 200*time.Millisecond))
			first := w.waitTop("the first state", "a")
			if !first.Snapshot || first.Prev != 0 || first.Resumed {
				t.Fatalf("the first state: %+v, want a snapshot, not resumed", first)
			}
			submit("b", 2)
			diff := w.waitTop("b on top", "b")
			if diff.Snapshot || diff.Prev != first.Seq || diff.Resumed || diff.Seq <= first.Seq {
				t.Fatalf("a change on the same connection: %+v, want a diff from %d", diff, first.Seq)
			}
			p.hold(up)
			p.hold(down)
			submit("c", 3)
			st := w.waitTop("c on top, on the other gateway", "c")
			if !st.Resumed || st.Snapshot != tt.snapshot || st.Seq <= diff.Seq {
				t.Fatalf("the resume's state: %+v, want resumed, snapshot %v", st, tt.snapshot)
			}
			if !tt.snapshot && st.Prev != diff.Seq {
				t.Fatalf("the resume's diff: prev %d, want the seq held %d", st.Prev, diff.Seq)
			}
			if len(st.Rows) != 3 || st.Rows[2].Member != "a" {
				t.Fatalf("after the resume: %+v", st)
			}
		})
	}
}

// TestWatchNeverGoesBack: a Watch that held a view at seq S resumes on a
// gateway that has applied less of the board-window (here a gateway of
// its own, as a node cut off or lagging is). That gateway sends nothing
// until it has applied S (PROTOCOL.md: it waits, bounded), then a diff
// from S: every seq Watch yields is above the one before, and the first
// after the move is a resumed diff from S. (Its content is y's: the two
// gateways here hold different logs, which a cluster's never do.)
func TestWatchNeverGoesBack(t *testing.T) {
	ahead, behind := startGateway(t), startGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	submit := func(g *gateway, member string) {
		t.Helper()
		if _, err := g.client(t, "t1", "k1", auth.RoleAdmin).Submit(ctx, "s", client.Score{Member: member, Score: 1}); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []*gateway{ahead, behind} {
		if _, err := g.client(t, "t1", "k1", auth.RoleAdmin).PutBoard(ctx, "s", client.Settings{Policy: "sum"}); err != nil {
			t.Fatal(err)
		}
	}
	const changes = 12
	for range changes {
		submit(ahead, "x")
	}
	pa, pb := startProxy(t, ahead.Addr), startProxy(t, behind.Addr)
	w := startWatcher(ctx, t, newClient(t, ahead, pa.URL(), pb.URL()),
		client.WatchReadTimeout(600*time.Millisecond), client.WatchBackoff(20*time.Millisecond, 200*time.Millisecond))
	held := w.waitScore("x's last change", "x", changes)
	pa.hold(up)
	pa.hold(down)
	await.For(t, 30*time.Second, func() error {
		if pb.accepted.Load() == 0 {
			return errors.New("the watch has not moved to the gateway behind")
		}
		return nil
	})
	// The gateway behind holds the resume from held.Seq until its own
	// changes reach it: nothing below held.Seq goes out.
	n := int(held.Seq) + 2
	for range n {
		submit(behind, "y")
	}
	st := w.waitScore("y's last change, on the gateway behind", "y", float64(n))
	for i := 1; i < len(w.seqs); i++ {
		if w.seqs[i] <= w.seqs[i-1] {
			t.Fatalf("the view went back: seqs %v", w.seqs)
		}
	}
	i := slices.Index(w.seqs, held.Seq)
	if first := w.all[i+1]; !first.Resumed || first.Snapshot || first.Prev != held.Seq || first.Rows[0].Member != "y" {
		t.Fatalf("the first state after the move: %+v, want a resumed diff from %d to y's board", first, held.Seq)
	}
	if len(st.Rows) != 1 {
		t.Fatalf("the gateway behind's state: %+v, want y alone", st)
	}
}

// TestWatchMovesPastAGatewayThatStaysBehind: a Watch that held a view at
// seq S moves (its gateway stalls) to one that never applies S: that one
// sends nothing of the view and, past its resume wait, answers unavailable;
// Watch moves on to a gateway that has applied S, which resumes it with a
// diff from S. Nothing of the gateway behind is ever yielded.
func TestWatchMovesPastAGatewayThatStaysBehind(t *testing.T) {
	ahead, twin := startGateway(t), startGateway(t) // the same log: a cluster's two caught-up nodes
	behind := startGatewayWith(t, "", live.Options{ResumeWait: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	submit := func(g *gateway, member string, score float64) {
		t.Helper()
		if _, err := g.client(t, "t1", "k1", auth.RoleAdmin).Submit(ctx, "s", client.Score{Member: member, Score: score}); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []*gateway{ahead, twin, behind} {
		if _, err := g.client(t, "t1", "k1", auth.RoleAdmin).PutBoard(ctx, "s", client.Settings{Policy: "latest"}); err != nil {
			t.Fatal(err)
		}
	}
	// A watcher on the twin from the start: its ring of changes reaches
	// back before S, so that the resume there is a diff.
	keeper := startWatcher(ctx, t, newClient(t, twin, twin.URL()))
	for i := range 6 {
		submit(ahead, "x", float64(i+1))
		submit(twin, "x", float64(i+1))
	}
	keeper.waitScore("the keeper's x", "x", 6)
	submit(behind, "x", 1)
	pa := startProxy(t, ahead.Addr)
	w := startWatcher(ctx, t, newClient(t, ahead, pa.URL(), behind.URL(), twin.URL()),
		client.WatchReadTimeout(600*time.Millisecond), client.WatchBackoff(20*time.Millisecond, 200*time.Millisecond))
	held := w.waitScore("x's last change", "x", 6)
	pa.hold(up)
	pa.hold(down)
	submit(twin, "y", 100)
	st := w.waitTop("y on top, on the twin", "y")
	if i := slices.Index(w.seqs, held.Seq); i < 0 || w.all[i+1].Snapshot || w.all[i+1].Prev != held.Seq || st.Seq <= held.Seq {
		t.Fatalf("after the move: %+v, want a diff from %d", w.all, held.Seq)
	}
	for i := 1; i < len(w.seqs); i++ {
		if w.seqs[i] <= w.seqs[i-1] {
			t.Fatalf("the view went back: seqs %v", w.seqs)
		}
	}
	if n := metric(t, behind, "rankwire_ws_resumes_behind_total"); n < 1 {
		t.Fatalf("the gateway behind gave up on %v resumes, want at least 1", n)
	}
}

// metric returns the value of g's counter or gauge name (0: none).
func metric(t *testing.T, g *gateway, name string) float64 {
	t.Helper()
	mfs, err := g.Reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			m := mf.GetMetric()[0]
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return 0
}
