package fingerprint

import (
	"errors"
	"fmt"
	"testing"
)

// Checkpoints fall on multiples of the spacing, never on 0; zero spacing
// is DefaultEvery.
func TestDue(t *testing.T) {
	for _, tc := range []struct {
		seq, every uint64
		want       bool
	}{{0, 10, false}, {10, 10, true}, {11, 10, false}, {20, 10, true}, {DefaultEvery, 0, true}, {10, 0, false}} {
		if got := Due(tc.seq, tc.every); got != tc.want {
			t.Errorf("Due(%d, %d) = %v", tc.seq, tc.every, got)
		}
	}
}

// Equal snapshots give equal checkpoints; one flipped bit, or another
// sequence, does not.
func TestOf(t *testing.T) {
	snap := []byte("RWSNAP5 some state")
	a, b := Of(10, snap), Of(10, append([]byte{}, snap...))
	if a != b {
		t.Fatal("equal snapshots differ")
	}
	flipped := append([]byte{}, snap...)
	flipped[9] ^= 1
	if c := Of(10, flipped); c.Sum == a.Sum {
		t.Fatal("a flipped bit hashes alike")
	}
	if c := Of(20, snap); c == a {
		t.Fatal("another sequence is the same checkpoint")
	}
}

func TestReportRoundTrip(t *testing.T) {
	r := Report{Node: "n2", Tenant: "acme", Checkpoint: Checkpoint{Seq: 42000}}
	r.Sum[0], r.Sum[31] = 7, 9
	got, err := ParseReport(r.Marshal())
	if err != nil || got != r {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	good := r.Marshal()
	for name, b := range map[string][]byte{
		"empty": nil, "version": append([]byte{9}, good[1:]...), "truncated": good[:len(good)-1],
		"trailing": append(append([]byte{}, good...), 0), "node length": good[:1+8+32+1],
		"zero seq": Report{Node: "n", Tenant: "t"}.Marshal(), "no node": Report{Tenant: "t", Checkpoint: Checkpoint{Seq: 1}}.Marshal(),
	} {
		if _, err := ParseReport(b); !errors.Is(err, ErrReport) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Every prefix of a valid report and every single-byte change is decoded
// without a panic.
func TestReportNeverPanics(t *testing.T) {
	good := Report{Node: "n1", Tenant: "t", Checkpoint: Checkpoint{Seq: 1}}.Marshal()
	for i := range good {
		_, _ = ParseReport(good[:i])
		for _, v := range []byte{0, 0xff} {
			b := append([]byte{}, good...)
			b[i] = v
			_, _ = ParseReport(b)
		}
	}
}

func sum(b byte) Sum { return Sum{b} }

// In a cluster of three, two matching sums decide: the third node with
// another sum has diverged; one report alone, or one against one, decides
// nothing.
func TestTallyMajority(t *testing.T) {
	ta := NewTally(3)
	ta.Record("n1", Checkpoint{Seq: 10, Sum: sum(1)})
	ta.Record("n3", Checkpoint{Seq: 10, Sum: sum(2)})
	if v, _ := ta.Judge("n3", 10); v != Undecided {
		t.Fatalf("one against one: %v", v)
	}
	ta.Record("n2", Checkpoint{Seq: 10, Sum: sum(1)})
	for node, want := range map[string]Verdict{"n1": Agrees, "n2": Agrees, "n3": Diverged, "n4": Undecided} {
		if v, s := ta.Judge(node, 10); v != want || s != sum(1) {
			t.Errorf("%s: %v %v, want %v", node, v, s[0], want)
		}
	}
	if v, _ := ta.Judge("n1", 20); v != Undecided {
		t.Errorf("no reports: %v", v)
	}
	// A node that rebuilt and reports again at the same seq is judged anew.
	ta.Record("n3", Checkpoint{Seq: 10, Sum: sum(1)})
	if v, _ := ta.Judge("n3", 10); v != Agrees {
		t.Errorf("after rebuild: %v", v)
	}
}

// Two sums that each reach a majority (more reporters than members)
// decide nothing.
func TestTallyAmbiguous(t *testing.T) {
	ta := NewTally(3)
	for i, s := range []byte{1, 1, 2, 2} {
		ta.Record(fmt.Sprint("n", i), Checkpoint{Seq: 5, Sum: sum(s)})
	}
	if v, _ := ta.Judge("n0", 5); v != Undecided {
		t.Fatalf("ambiguous: %v", v)
	}
}

// A tally holds keepCheckpoints sequences and 2×members nodes per
// sequence; older reports and further nodes are dropped.
func TestTallyBounded(t *testing.T) {
	ta := NewTally(1)
	for seq := uint64(1); seq <= 100; seq++ {
		ta.Record("n1", Checkpoint{Seq: seq})
	}
	if len(ta.bySeq) != keepCheckpoints || ta.oldest() != 100-keepCheckpoints+1 {
		t.Fatalf("kept %d from %d", len(ta.bySeq), ta.oldest())
	}
	if ta.Record("n1", Checkpoint{Seq: 3}) {
		t.Fatal("old report kept")
	}
	if !ta.Record("n2", Checkpoint{Seq: 100}) || ta.Record("n3", Checkpoint{Seq: 100}) {
		t.Fatal("want 2 nodes per seq at members 1")
	}
	if v, _ := ta.Judge("n1", 100); v != Agrees { // a cluster of one: its own report is the majority
		t.Fatalf("members 1: %v", v)
	}
}

func TestVerdictString(t *testing.T) {
	if Undecided.String() != "undecided" || Agrees.String() != "agrees" || Diverged.String() != "diverged" {
		t.Fatal("names")
	}
}
