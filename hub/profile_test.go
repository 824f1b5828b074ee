package hub

import (
	"errors"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

// Profiles: set, read back, shown in rows, changed (a new seq of every
// open board-window ranking the member, none of an ended one), carried
// through a merge, equal on another node and after a restart.
func TestProfiles(t *testing.T) {
	url := startNATS(t)
	dir := t.TempDir()
	clk := newClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	h := startHub(t, Config{Now: clk.now, NATSURL: url, DataDir: dir})
	mustPut(t, h, "t1", "b", Settings{Windows: []string{"all", "day"}})
	mustPut(t, h, "t1", "done", Settings{EndsAt: "2026-12-01T11:00:00Z"})
	mustPut(t, h, "t1", "other", Settings{})
	mustSubmit(t, h, "t1", "b", Item{Member: "p1", Score: 10}, Item{Member: "p2", Score: 20})
	mustSubmit(t, h, "t1", "done", Item{Member: "p1", Score: 10})
	mustSubmit(t, h, "t1", "other", Item{Member: "p2", Score: 1})
	clk.set(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)) // "done" has ended

	ctx := testCtx(t)
	if _, err := h.Privacy().Profile("t1", "p1", Reach{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no profile yet: %v", err)
	}
	seqOf := func(board, window string) uint64 {
		p, err := h.Top(Loc{Tenant: "t1", Board: board, Window: window}, 0, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		return p.Seq
	}
	before := []uint64{seqOf("b", "all"), seqOf("b", "day"), seqOf("done", "all"), seqOf("other", "all")}
	p, err := h.PutProfile(ctx, "t1", "p1", Profile{Name: "GoldenAce", Avatar: "https://cdn.example/a.png", Country: "mt"})
	if err != nil || p.Country != "MT" {
		t.Fatalf("put: %+v %v", p, err)
	}
	after := []uint64{seqOf("b", "all"), seqOf("b", "day"), seqOf("done", "all"), seqOf("other", "all")}
	if after[0] != before[0]+1 || after[1] != before[1]+1 || after[2] != before[2] || after[3] != before[3] {
		t.Fatalf("seqs %v -> %v: want the open board's windows ranking p1 bumped, the others not", before, after)
	}
	if _, err := h.PutProfile(ctx, "t1", "p1", p); err != nil || seqOf("b", "all") != after[0] {
		t.Fatalf("setting the same profile again changed the board: %v", err)
	}
	page, _ := h.Top(Loc{Tenant: "t1", Board: "b"}, 0, nil, 10)
	if page.Rows[1].Member != "p1" || page.Rows[1].Profile != p || page.Rows[0].Profile != (Profile{}) {
		t.Fatalf("rows: %+v", page.Rows)
	}
	// A profile for a member that never submitted; then a merge of p1 into
	// p2 (who has none): p2 takes p1's.
	if _, err := h.PutProfile(ctx, "t1", "newbie", Profile{Name: "Newbie"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Link(ctx, "t1", "p2", []string{"p1"}); err != nil {
		t.Fatal(err)
	}
	if got, err := h.Privacy().Profile("t1", "p2", Reach{}); err != nil || got != p {
		t.Fatalf("after the merge p2 has %+v, %v", got, err)
	}

	other := startHub(t, Config{Now: clk.now, NATSURL: url, DiscoverInterval: -1})
	if _, err := other.replica(ctx, "t1", false); err != nil {
		t.Fatal(err)
	}
	if got, _ := other.Privacy().Profile("t1", "newbie", Reach{}); got.Name != "Newbie" {
		t.Fatalf("another node: %+v", got)
	}
	want := snapshotBytes(t, h, "t1")
	if string(snapshotBytes(t, other, "t1")) != string(want) {
		t.Fatal("another node replaying the stream holds other profiles")
	}
	h.Close()
	back := startHub(t, Config{Now: clk.now, NATSURL: url, DataDir: dir})
	if _, err := back.replica(ctx, "t1", false); err != nil {
		t.Fatal(err)
	}
	if string(snapshotBytes(t, back, "t1")) != string(want) {
		t.Fatal("the restarted node holds other profiles")
	}
}

// snapshotBytes returns the tenant's state as a snapshot encodes it.
func snapshotBytes(t *testing.T, h *Hub, tenant string) []byte {
	t.Helper()
	var data []byte
	err := openReplica(t, h, tenant).read(func(st *ledger.State) (err error) {
		data, err = st.Encode(nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ledger.Decode(data, nil)
	if err != nil {
		t.Fatalf("the snapshot does not decode: %v", err)
	}
	if again, _ := st.Encode(nil); string(again) != string(data) {
		t.Fatal("the snapshot does not round-trip")
	}
	return data
}
