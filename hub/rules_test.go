package hub

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

func f64(v float64) *float64 { return &v }

// submitOne submits one item and returns its result.
func submitOne(t *testing.T, h *Hub, board string, it Item) Result {
	t.Helper()
	return mustSubmit(t, h, "t1", board, it)[0]
}

func wantHeld(t *testing.T, r Result, reason Reason) {
	t.Helper()
	if r.Reason != reason || r.Applied || (reason != ReasonFull && r.QID == 0) {
		t.Fatalf("result %+v, want held for %v", r, reason)
	}
}

func wantRanked(t *testing.T, r Result) {
	t.Helper()
	if r.Reason != ReasonNone || r.QID != 0 || !r.Applied {
		t.Fatalf("result %+v, want applied", r)
	}
}

// Every rule holds what breaks it and ranks what does not, at both edges;
// held items are listed in order, approved (ranked at the approval, past
// the rules) or rejected once; a repeated id answers as the original;
// another node and a restart hold the same.
func TestRulesQuarantine(t *testing.T) {
	url := startNATS(t)
	dir := t.TempDir()
	clk := newClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	h := startHub(t, Config{Now: clk.now, NATSURL: url, DataDir: dir})
	rules := &Rules{MinScore: f64(0), MaxScore: f64(1000), MaxStep: f64(100), MaxPerMinute: 3}
	mustPut(t, h, "t1", "b", Settings{Rules: rules})

	wantRanked(t, submitOne(t, h, "b", Item{Member: "p1", Score: 50}))
	wantHeld(t, submitOne(t, h, "b", Item{Member: "p1", Score: 150.5}), ReasonMaxStep) // a step of 100.5
	wantRanked(t, submitOne(t, h, "b", Item{Member: "p1", Score: 150}))                // exactly 100: ranked
	wantHeld(t, submitOne(t, h, "b", Item{Member: "p1", Score: 151}), ReasonMaxPerMinute)
	clk.set(clk.now().Add(time.Minute))
	wantRanked(t, submitOne(t, h, "b", Item{Member: "p1", Score: 151})) // a new minute
	wantRanked(t, submitOne(t, h, "b", Item{Member: "p2", Score: 0}))   // min_score is inclusive
	wantHeld(t, submitOne(t, h, "b", Item{Member: "p2", Score: -0.5}), ReasonMinScore)
	wantRanked(t, submitOne(t, h, "b", Item{Member: "p3", Score: 1000})) // a first entry has no step
	wantHeld(t, submitOne(t, h, "b", Item{Member: "p4", Score: 1000.5, ID: "x1"}), ReasonMaxScore)
	again := submitOne(t, h, "b", Item{Member: "p4", Score: 1000.5, ID: "x1"})
	if !again.Duplicate || again.Reason != ReasonMaxScore || again.QID == 0 {
		t.Fatalf("a repeated id: %+v", again)
	}

	held, more, err := h.Disputes().Quarantine("t1", "b", 0, 2)
	if err != nil || !more || len(held) != 2 || held[0].Member != "p1" || held[0].Score != 150.5 || held[0].Reason != ReasonMaxStep {
		t.Fatalf("first page: %+v more %v err %v", held, more, err)
	}
	rest, more, _ := h.Disputes().Quarantine("t1", "b", held[1].QID, 10)
	if more || len(rest) != 2 || rest[1].Member != "p4" || rest[1].QID != again.QID {
		t.Fatalf("second page: %+v more %v", rest, more)
	}

	res, err := h.Disputes().Approve(testCtx(t), "t1", Decision{Board: "b", QID: rest[1].QID}) // p4's 1000.5: ranked now, past max_score
	if err != nil || !res.Applied || res.Score != 1000.5 || res.Rank != 1 || res.Reason != ReasonNone {
		t.Fatalf("approve: %+v, %v", res, err)
	}
	if _, err := h.Disputes().Approve(testCtx(t), "t1", Decision{Board: "b", QID: rest[1].QID}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("approving twice: %v", err)
	}
	if err := h.Disputes().Reject(testCtx(t), "t1", Decision{Board: "b", QID: held[0].QID}); err != nil { // p1's 150.5
		t.Fatal(err)
	}
	if err := h.Disputes().Reject(testCtx(t), "t1", Decision{Board: "b", QID: 999}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rejecting an unknown qid: %v", err)
	}
	if got := top(t, h, Loc{Tenant: "t1", Board: "b"}); strings.Join(got, " ") != "p4:1000.5 p3:1000 p1:151 p2:0" {
		t.Fatalf("the board: %v", got)
	}
	left, _, _ := h.Disputes().Quarantine("t1", "b", 0, 10)
	if len(left) != 2 || left[0].Reason != ReasonMaxPerMinute || left[1].Reason != ReasonMinScore {
		t.Fatalf("left in quarantine: %+v", left)
	}

	other := startHub(t, Config{Now: clk.now, NATSURL: url, DiscoverInterval: -1})
	if _, err := other.replica(testCtx(t), "t1", false); err != nil {
		t.Fatal(err)
	}
	if string(fingerprint(t, h, "t1")) != string(fingerprint(t, other, "t1")) {
		t.Fatal("another node replaying the stream holds another quarantine")
	}
	// p5 submits three times in this minute, then the node restarts from its
	// snapshot: the fourth in the same minute is still one too many.
	for i := range 3 {
		wantRanked(t, submitOne(t, h, "b", Item{Member: "p5", Score: float64(10 + i)}))
	}
	want := fingerprint(t, h, "t1")
	r := h.reg.lookup("t1")
	r.mu.RLock()
	data, err := r.st.Encode(nil)
	r.mu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	if st, err := ledger.Decode(data, nil); err != nil {
		t.Fatal(err)
	} else if again, _ := st.Encode(nil); string(again) != string(data) {
		t.Fatal("the snapshot does not round-trip the quarantine")
	} else if held, _, _ := st.Quarantine("b", 0, MaxHeldPage); len(held) != 2 {
		t.Fatalf("the snapshot holds %+v", held)
	}
	h.Close()
	back := startHub(t, Config{Now: clk.now, NATSURL: url, DataDir: dir})
	if _, err := back.replica(testCtx(t), "t1", false); err != nil {
		t.Fatal(err)
	}
	if string(fingerprint(t, back, "t1")) != string(want) {
		t.Fatal("the restarted node holds another quarantine")
	}
	wantHeld(t, submitOne(t, back, "b", Item{Member: "p5", Score: 13}), ReasonMaxPerMinute)
}

// max_step follows the board's order and policy: for asc a step is a fall,
// for sum a single score.
func TestRulesStepFollowsOrder(t *testing.T) {
	h := startHub(t, Config{NATSURL: startNATS(t)})
	mustPut(t, h, "t1", "golf", Settings{Order: "asc", Rules: &Rules{MaxStep: f64(10)}})
	mustPut(t, h, "t1", "sum", Settings{Policy: "sum", Rules: &Rules{MaxStep: f64(10)}})
	wantRanked(t, submitOne(t, h, "golf", Item{Member: "p", Score: 100}))
	wantHeld(t, submitOne(t, h, "golf", Item{Member: "p", Score: 89}), ReasonMaxStep)
	wantRanked(t, submitOne(t, h, "golf", Item{Member: "p", Score: 90}))
	if r := submitOne(t, h, "golf", Item{Member: "p", Score: 500}); r.Reason != ReasonNone { // worse: no step
		t.Fatalf("a worse golf score: %+v", r)
	}
	wantRanked(t, submitOne(t, h, "sum", Item{Member: "p", Score: 10}))
	wantRanked(t, submitOne(t, h, "sum", Item{Member: "p", Score: 10}))
	wantHeld(t, submitOne(t, h, "sum", Item{Member: "p", Score: 10.5}), ReasonMaxStep)
}

// An approval is a submission at its own time: refused once the board ended.
func TestApproveAfterTheEnd(t *testing.T) {
	clk := newClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	h := startHub(t, Config{Now: clk.now, NATSURL: startNATS(t)})
	mustPut(t, h, "t1", "b", Settings{EndsAt: "2026-12-01T11:00:00Z", Rules: &Rules{MaxScore: f64(10)}})
	r := submitOne(t, h, "b", Item{Member: "p", Score: 11})
	wantHeld(t, r, ReasonMaxScore)
	clk.set(time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	_, err := h.Disputes().Approve(testCtx(t), "t1", Decision{Board: "b", QID: r.QID})
	wantConflict(t, err, "ends_at")
	if held, _, _ := h.Disputes().Quarantine("t1", "b", 0, 10); len(held) != 1 {
		t.Fatalf("the refused approval took the item: %+v", held)
	}
	if err := h.Disputes().Reject(testCtx(t), "t1", Decision{Board: "b", QID: r.QID}); err != nil {
		t.Fatalf("rejecting after the end: %v", err)
	}
}
