package snapbucket

import (
	"log/slog"
	"testing"

	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/natstest"
)

// boardAt is a state at seq holding one board, b, and member as its one
// entry: two members give two states at one sequence.
func boardAt(t *testing.T, seq uint64, member string) *ledger.State {
	t.Helper()
	set, err := ledger.Settings{}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	st := ledger.New()
	if out := st.Apply(seq-1, &ledger.Event{Kind: ledger.EvSettings, Board: "b", Settings: &set}); out.Err != nil {
		t.Fatal(out.Err)
	}
	ev := &ledger.Event{Kind: ledger.EvSubmit, Board: "b", Items: []ledger.Item{{Member: member, Score: 1}}}
	ev.Prepare()
	if out := st.Apply(seq, ev); out.Err != nil {
		t.Fatal(out.Err)
	}
	return st
}

// Load restores a shared snapshot only where the state it decodes to has
// the checkpoint the object names, and, for a loader that requires it,
// only where a majority agreed with that checkpoint: a wrong state named
// with the right checkpoint, a snapshot no majority agreed with, or one
// that names no checkpoint (written before the rule) is refused, and
// Newer then keeps the node's own.
func TestLoadChecksTheSnapshot(t *testing.T) {
	good, wrong := boardAt(t, 9, "ann"), boardAt(t, 9, "cheat")
	forged := snapOf(t, wrong, true)
	forged.Sum = snapOf(t, good, true).Sum // the majority's checkpoint, another state's bytes
	for _, tc := range []struct {
		name   string
		snap   Snapshot
		agreed bool // the loader requires a majority's agreement
		want   bool
	}{
		{"agreed, as named", snapOf(t, good, true), true, true},
		{"not agreed, loader needs it", snapOf(t, good, false), true, false},
		{"not agreed, loader without the cluster's comparison", snapOf(t, good, false), false, true},
		{"another state under the majority's checkpoint", forged, true, false},
		{"another state, loader without the comparison", forged, false, false},
		{"names no checkpoint", Snapshot{Seq: 9, Agreed: true, Data: snapOf(t, good, true).Data}, true, false},
		{"names another sequence", Snapshot{Seq: 10, Sum: snapOf(t, good, true).Sum, Agreed: true, Data: snapOf(t, good, true).Data}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, js := natstest.JetStream(t)
			b, err := Open(t.Context(), js, nil, 1, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			b.Save("a", tc.snap)
			st, ok := b.Load(t.Context(), "a", 0, nil, tc.agreed)
			if ok != tc.want {
				t.Fatalf("loaded %v, want %v", ok, tc.want)
			}
			if ok && st.Seq() != 9 {
				t.Fatalf("loaded seq %d", st.Seq())
			}
			own := ledger.New()
			own.Skip(3)
			if got, err := b.Newer(t.Context(), "a", own, nil, nil, tc.agreed); err != nil || (got == own) == tc.want {
				t.Fatalf("Newer: the node's own kept %v, err %v", got == own, err)
			}
		})
	}
}
