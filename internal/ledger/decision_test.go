package ledger

import (
	"errors"
	"testing"
)

// heldTwo returns disputeBoard's state with two submissions held by its
// max_step rule (a's 5000, qid 1; b's 4000, qid 2), the next sequence and
// a time before the board's end.
func heldTwo(t *testing.T) (*State, uint64, int64) {
	t.Helper()
	end := int64(1_800_000_000_000)
	st, seq := disputeBoard(t, end)
	out := st.Apply(seq, &Event{Kind: EvSubmit, At: end - 4000, Board: "t",
		Items: []Item{{Member: "a", Score: 5000}, {Member: "b", Score: 4000}}})
	if len(out.Held) != 2 {
		t.Fatalf("held %+v, want two", out.Held)
	}
	return st, seq + 1, end - 3000
}

// TestDecisionsLogged: an approve and a reject that ask to be logged are
// admin actions with their sub, reason and qid, and survive a snapshot;
// an old event (not Logged) records nothing; a bad reason refuses the
// decision and the item stays held.
func TestDecisionsLogged(t *testing.T) {
	st, seq, at := heldTwo(t)
	bad := st.Apply(seq, &Event{Kind: EvReject, At: at, Board: "t", QID: 2, Reason: "a\x01b", Logged: true})
	if !errors.Is(bad.Err, ErrBadRequest) || msgOf(bad.Err) == "" {
		t.Fatalf("a control character in the reason: %v", bad.Err)
	}
	if held, _, _ := st.Quarantine("t", 0, 10); len(held) != 2 {
		t.Fatalf("a refused decision released an item: %+v", held)
	}
	if out := st.Apply(seq+1, &Event{Kind: EvApprove, At: at, Board: "t", QID: 1, Reason: "ticket 7: real win", Sub: "ops-ann", Logged: true}); out.Err != nil || !out.Results[0].Applied {
		t.Fatalf("approve: %+v", out)
	}
	if out := st.Apply(seq+2, &Event{Kind: EvReject, At: at, Board: "t", QID: 2, Sub: "ops-bob", Logged: true}); out.Err != nil {
		t.Fatalf("reject without a reason: %v", out.Err)
	}
	want := []AdminAction{
		{Seq: seq + 1, At: at, Action: ActionApprove, Member: "a", Sub: "ops-ann", Reason: "ticket 7: real win", QID: 1},
		{Seq: seq + 2, At: at, Action: ActionReject, Member: "b", Sub: "ops-bob", QID: 2},
	}
	checkActions(t, st, want)
	back, _ := reencoded(t, st)
	checkActions(t, back, want)

	old, seq, at := heldTwo(t)
	old.Apply(seq, &Event{Kind: EvApprove, At: at, Board: "t", QID: 1})
	old.Apply(seq+1, &Event{Kind: EvReject, At: at, Board: "t", QID: 2})
	checkActions(t, old, nil)
}

func checkActions(t *testing.T, st *State, want []AdminAction) {
	t.Helper()
	got, _, err := st.AdminActions("t", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("actions %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("action %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
