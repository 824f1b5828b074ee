package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/client"
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
