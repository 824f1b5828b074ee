package hub

import (
	"testing"
)

// Void through the hub over the embedded NATS: the member's entry in the
// all window and its week window is recomputed without the submission, a
// second void of it and an unknown seq are refused naming seq, a twin
// tenant with the same board and seqs keeps its entry, and the audit
// replay finds the snapshot equal.
func TestVoidSubmission(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, Config{DataDir: dir})
	for _, tenant := range []string{"t1", "t2"} {
		mustPut(t, h, tenant, "b", Settings{Windows: []string{"all", "week"}})
		mustSubmit(t, h, tenant, "b", Item{Member: "p1", Score: 40})
		mustSubmit(t, h, tenant, "b", Item{Member: "p2", Score: 60})
	}
	res := mustSubmit(t, h, "t1", "b", Item{Member: "p1", Score: 90})
	mustSubmit(t, h, "t2", "b", Item{Member: "p1", Score: 90})
	if res[0].Seq != 3 || !res[0].Applied {
		t.Fatalf("the cheat's result: %+v", res[0])
	}
	ctx := testCtx(t)
	act, err := h.Disputes().Void(ctx, "t1", Amendment{Board: "b", Reason: "replayed packet", Sub: "ops"}, res[0].Seq)
	if err != nil || act.Action != "void" || act.Voided != 3 || act.Member != "p1" || act.Sub != "ops" || act.Revision != 1 {
		t.Fatalf("void: %+v %v", act, err)
	}
	for _, w := range []string{"all", "week"} {
		if got := top(t, h, Loc{Tenant: "t1", Board: "b", Window: w}); len(got) != 2 || got[0] != "p2:60" || got[1] != "p1:40" {
			t.Fatalf("t1 %s after the void: %v", w, got)
		}
		if got := top(t, h, Loc{Tenant: "t2", Board: "b", Window: w}); len(got) != 2 || got[0] != "p1:90" {
			t.Fatalf("the twin tenant felt it (%s): %v", w, got)
		}
	}
	_, err = h.Disputes().Void(ctx, "t1", Amendment{Board: "b", Reason: "again"}, 3)
	wantErr(t, err, ErrConflict)
	if !contains(err.Error(), "seq: 3 was already voided") {
		t.Fatalf("second void: %v", err)
	}
	r := h.reg.lookup("t1")
	r.voiding.Store(true) // another void being planned
	_, err = h.Disputes().Void(ctx, "t1", Amendment{Board: "b", Reason: "x"}, 77)
	wantErr(t, err, ErrLimit)
	r.voiding.Store(false)
	_, err = h.Disputes().Void(ctx, "t1", Amendment{Board: "b", Reason: "x"}, 77)
	wantErr(t, err, ErrNotFound)
	_, err = h.Disputes().Void(ctx, "t1", Amendment{Board: "nope", Reason: "x"}, 1)
	wantErr(t, err, ErrNotFound)
	_, err = h.Disputes().Void(ctx, "t3", Amendment{Board: "b", Reason: "x"}, 1)
	wantErr(t, err, ErrNotFound)
	h.Close()

	audits, err := Verify(testCtx(t), Config{DataDir: dir}, []string{"t1"})
	if err != nil || len(audits) != 1 || !audits[0].OK() || len(audits[0].Snapshots) != 1 || !audits[0].Snapshots[0].Equal {
		t.Fatalf("verify: %+v %v", audits, err)
	}
}
