package hub

import (
	"os"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/snapfile"
)

// The audit replay rebuilds a tenant from its stream alone and finds the
// snapshot the gateway wrote at shutdown equal, with the same digest on
// every replay; a snapshot whose standings were altered is reported with
// the rank that differs.
func TestVerify(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, Config{DataDir: dir})
	mustPut(t, h, "t1", "b", Settings{Windows: []string{"all", "week"}})
	mustPut(t, h, "t1", "c", Settings{Policy: "sum"})
	for i := range 50 {
		mustSubmit(t, h, "t1", "b", Item{Member: "p" + string(rune('a'+i%20)), Score: float64(i), ID: "s" + string(rune('a'+i))})
		mustSubmit(t, h, "t1", "c", Item{Member: "q" + string(rune('a'+i%7)), Score: 1})
	}
	if _, err := h.Link(testCtx(t), "t1", "pa", []string{"email:a@x.io", "pb"}); err != nil {
		t.Fatal(err)
	}
	if err := h.RemoveMember(testCtx(t), "t1", "b", "pc"); err != nil {
		t.Fatal(err)
	}
	mustPut(t, h, "t2", "b", Settings{})
	h.Close() // writes the snapshots

	audits, err := Verify(testCtx(t), Config{DataDir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(audits) != 2 || audits[0].Tenant != "t1" || audits[1].Tenant != "t2" {
		t.Fatalf("audits %+v, want t1 and t2", audits)
	}
	a := audits[0]
	if !a.OK() || len(a.Snapshots) != 1 || !a.Snapshots[0].Equal || a.Events != a.LastSeq || a.Boards != 2 ||
		!strings.HasPrefix(a.Digest, "sha256:") {
		t.Fatalf("t1: %+v", a)
	}
	again, err := Verify(testCtx(t), Config{DataDir: dir}, []string{"t1"})
	if err != nil || len(again) != 1 || again[0].Digest != a.Digest {
		t.Fatalf("a second replay: %+v %v, want digest %s", again, err, a.Digest)
	}

	// Alter the standings in the snapshot file, keeping its sequence.
	path := snapfile.In(dir).Path("t1")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := ledger.Decode(data, h.snaps.keys.Ring("t1")) // its alias is sealed: the closed hub's keys still open it (cached)
	if err != nil {
		t.Fatal(err)
	}
	seq := st.Seq()
	st.Apply(seq+1, &ledger.Event{Kind: ledger.EvSubmit, At: 1, Board: "b", Items: []Item{{Member: "cheater", Score: 1e9}}})
	st.Skip(seq) // back to the snapshot's sequence: a forgery at the same point
	forged, err := st.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	audits, err = Verify(testCtx(t), Config{DataDir: dir}, []string{"t1"})
	if err != nil {
		t.Fatal(err)
	}
	s := audits[0].Snapshots[0]
	if audits[0].OK() || s.Equal || !strings.Contains(strings.Join(s.Diffs, "\n"), "rank 1 is pj 49/0 in the replay, cheater 1e+09/0 in the snapshot") {
		t.Fatalf("a forged snapshot: %+v", s)
	}
	if audits[0].Digest != a.Digest {
		t.Fatal("the replay's digest depends on the snapshot")
	}
}
