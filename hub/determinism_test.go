package hub

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

// fingerprint encodes a tenant's state for comparison: its snapshot
// (boards and their windows with their seqs, identities, kept
// idempotency ids, quarantines, histories, profiles), after checking every
// board-window's invariants.
func fingerprint(t *testing.T, h *Hub, tenant string) []byte {
	t.Helper()
	var data []byte
	err := openReplica(t, h, tenant).read(func(st *ledger.State) (err error) {
		if err := st.Check(); err != nil {
			return err
		}
		data, err = st.Encode(nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// feed drives a random mix of every event kind, logged seed.
func feed(t *testing.T, h *Hub, clk *clock, seed uint64, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed))
	ctx := testCtx(t)
	mustPut(t, h, "t1", "s", Settings{Policy: "sum", Windows: []string{"all", "day"}})
	mustPut(t, h, "t1", "b", Settings{Windows: []string{"week", "all"}, Tiebreak: "latest"})
	// Local windows: each node cuts Chatham's days (+13:45) and Sunday weeks alike.
	mustPut(t, h, "t1", "z", Settings{Windows: []string{"day", "week", "month"}, TimeZone: "Pacific/Chatham", WeekStarts: "sunday"})
	three, two := 3.0, 2.0
	mustPut(t, h, "t1", "q", Settings{Rules: &Rules{MaxScore: &three, MaxStep: &two, MaxPerMinute: 4}})
	member := func() string { return fmt.Sprintf("p%d", rng.IntN(40)) }
	decide := func(approve bool) {
		held, _, _ := h.Disputes().Quarantine("t1", "q", 0, MaxHeldPage)
		if len(held) == 0 {
			return
		}
		qid := held[rng.IntN(len(held))].QID
		if approve {
			_, _ = h.Disputes().Approve(ctx, "t1", Decision{Board: "q", QID: qid})
		} else {
			_ = h.Disputes().Reject(ctx, "t1", Decision{Board: "q", QID: qid})
		}
	}
	for i := range n {
		if rng.IntN(3) == 0 {
			clk.set(clk.now().Add(time.Duration(rng.IntN(20)) * time.Hour))
		} else {
			clk.set(clk.now().Add(time.Duration(rng.IntN(40)) * time.Second)) // several in a minute
		}
		switch rng.IntN(15) {
		case 14: // a void on the sum board with day windows (a random seq: most were a submission's)
			_, _ = h.Disputes().Void(ctx, "t1", Amendment{Board: "s", Reason: "test", Sub: "ops"}, uint64(1+rng.IntN(60)))
		case 13: // an amendment of board b's standings (disputes.go)
			a := Amendment{Board: "b", Member: member(), Reason: "test", Sub: "ops"}
			if rng.IntN(2) == 0 {
				_, _ = h.Disputes().Disqualify(ctx, "t1", a)
			} else {
				_, _ = h.Disputes().Reinstate(ctx, "t1", a)
			}
		case 10, 11:
			decide(rng.IntN(2) == 0)
		case 12:
			items := make([]Item, 1+rng.IntN(20))
			for j := range items {
				items[j] = Item{Member: fmt.Sprintf("p%d", rng.IntN(6)), Score: float64(rng.IntN(5)), ID: fmt.Sprint(rng.IntN(300))}
			}
			mustSubmit(t, h, "t1", "q", items...)
		case 0:
			_, _ = h.Link(ctx, "t1", member(), []string{member()})
		case 1:
			_ = h.RemoveMember(ctx, "t1", "b", member())
		case 2:
			if i%7 == 0 {
				_ = h.Reset(ctx, "t1", "s")
			}
		default:
			items := make([]Item, 1+rng.IntN(20))
			for j := range items {
				items[j] = Item{Member: member(), Score: float64(rng.IntN(5)), ID: fmt.Sprint(rng.IntN(300))}
			}
			mustSubmit(t, h, "t1", []string{"s", "b", "z"}[rng.IntN(3)], items...)
		}
	}
	// A void and an amendment at least once, whatever the draws: a seed
	// whose draws applied neither (1795780017016310170) left the disputes
	// untested.
	// A member and ids of their own per seed: a test may feed one hub twice.
	last := fmt.Sprint("last-", seed)
	res := mustSubmit(t, h, "t1", "s", Item{Member: last, Score: 1, ID: last})
	if _, err := h.Disputes().Void(ctx, "t1", Amendment{Board: "s", Reason: "test", Sub: "ops"}, res[0].Seq); err != nil {
		t.Fatalf("void: %v", err)
	}
	mustSubmit(t, h, "t1", "b", Item{Member: last, Score: 1, ID: last})
	if _, err := h.Disputes().Disqualify(ctx, "t1", Amendment{Board: "b", Member: last, Reason: "test", Sub: "ops"}); err != nil {
		t.Fatalf("disqualify: %v", err)
	}
}

var detSeed = flag.Uint64("hub.seed", 0, "TestDeterminism's seed (0: from the clock)")

func TestDeterminism(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if *detSeed != 0 {
		seed = *detSeed
	}
	t.Logf("seed %d (-hub.seed to repeat)", seed)
	clk := newClock(date(2026, 1, 1))
	url := startNATS(t)
	a := startHub(t, Config{Now: clk.now, NATSURL: url})
	feed(t, a, clk, seed, 150)
	b := startHub(t, Config{NATSURL: url})
	fa, fb := fingerprint(t, a, "t1"), fingerprint(t, b, "t1")
	if !bytes.Equal(fa, fb) {
		t.Fatalf("replicas differ: %d vs %d bytes", len(fa), len(fb))
	}
	if len(fa) < 1000 {
		t.Fatalf("fingerprint suspiciously small: %d bytes", len(fa))
	}
	r := a.reg.lookup("t1")
	r.mu.RLock()
	held := r.st.HeldEver("q")
	r.mu.RUnlock()
	if held == 0 {
		t.Fatal("the feed held nothing in quarantine: the rules went untested")
	}
	if acts, _, _ := a.Disputes().AdminActions("t1", "b", 0, MaxAuditPage); len(acts) == 0 {
		t.Fatal("the feed amended nothing: the disputes went untested")
	}
	if acts, _, _ := a.Disputes().AdminActions("t1", "s", 0, MaxAuditPage); len(acts) == 0 {
		t.Fatal("the feed voided nothing: voids went untested")
	} else {
		t.Logf("voids: %d", len(acts))
	}
}
