package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/snapfile"
)

// personal is one tenant's personal data about member p1 in the erasure
// tests: its display name, avatar URL and an e-mail alias.
type personal struct{ name, avatar, alias string }

func (p personal) strings() []string { return []string{p.name, p.avatar, p.alias} }

// filesHolding returns the files under dir that hold one of needles.
func filesHolding(t *testing.T, dir string, needles ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) { // a snapshot's temporary file, renamed or removed since listed
			return nil
		}
		if err != nil {
			return err
		}
		for _, n := range needles {
			if bytes.Contains(data, []byte(n)) {
				out = append(out, fmt.Sprintf("%s holds %q", p, n))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEraseLeavesNothingOnDisk: p1 of t1 has a profile and an e-mail
// alias, by which it submitted and was removed from a board, ranks on an
// open board and on a tournament whose end was notified with its name
// (stored sealed, like the log and the snapshots: no file holds it in
// clear, even before the erasure). After the erasure and a restart, reads and notifications show
// none of it and no byte of the data directory (the
// embedded NATS's streams, the snapshots) holds the name, the avatar URL
// or the alias; t2's p1 keeps everything.
func TestEraseLeavesNothingOnDisk(t *testing.T) {
	dir := t.TempDir()
	clk := newClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	cfg := Config{Now: clk.now, DataDir: dir, SnapshotEvery: 2}
	h := startHub(t, cfg)
	ctx := testCtx(t)
	data := map[string]personal{
		"t1": {"Qzxv Erasable", "https://avatars.qzxv.example/p1.png", "email:qzxv@mail.example"},
		"t2": {"Twin Keeper", "https://avatars.twin.example/p1.png", "email:twin@mail.example"},
	}
	for _, tenant := range []string{"t1", "t2"} {
		d := data[tenant]
		mustPut(t, h, tenant, "open", Settings{})
		mustPut(t, h, tenant, "cup", Settings{EndsAt: "2026-12-01T11:00:00Z", Prizes: []Prize{{From: 1, To: 1, Prize: "€100"}}})
		mustSubmit(t, h, tenant, "open", Item{Member: "p1", Score: 10}, Item{Member: "p2", Score: 5})
		mustSubmit(t, h, tenant, "cup", Item{Member: "p1", Score: 10}, Item{Member: "p2", Score: 5})
		if _, err := h.Link(ctx, tenant, "p1", []string{d.alias}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.PutProfile(ctx, tenant, d.alias, Profile{Name: d.name, Avatar: d.avatar}); err != nil {
			t.Fatal(err)
		}
		// By the alias: logged as p1 (TestAliasLoggedAsID).
		mustSubmit(t, h, tenant, "open", Item{Member: d.alias, Score: 12})
		mustPut(t, h, tenant, "side", Settings{})
		mustSubmit(t, h, tenant, "side", Item{Member: d.alias, Score: 1})
		if err := h.RemoveMember(ctx, tenant, "side", d.alias); err != nil {
			t.Fatal(err)
		}
	}
	snapped := snapshotSeq(t, h, "t1")
	checkFor(t, 10*time.Second, func() error { // a snapshot taken since the data was given
		mustSubmit(t, h, "t1", "open", Item{Member: "p3", Score: 1})
		if seq := snapshotSeq(t, h, "t1"); seq <= snapped {
			return fmt.Errorf("no snapshot since seq %d", snapped)
		}
		return nil
	})
	// Sealed everywhere, the snapshots included (ledger's RWSNAP8): no file
	// holds the personal data in clear, even before the erasure.
	if got := filesHolding(t, dir, data["t1"].strings()...); len(got) != 0 {
		t.Fatalf("personal data in clear before the erasure:\n%s", strings.Join(got, "\n"))
	}
	clk.set(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)) // cup ended and is final: board.ended names p1
	for _, tenant := range []string{"t1", "t2"} {
		if n := waitNotes(t, h, tenant, 1); n[0].Rows[0].Name != data[tenant].name {
			t.Fatalf("%s: board.ended shows %+v", tenant, n[0].Rows[0])
		}
	}
	// The notification names p1 when read (notes opens it), and is stored
	// with the name sealed: still no file holds it in clear.
	if got := filesHolding(t, dir, data["t1"].strings()...); len(got) != 0 {
		t.Fatalf("the log or the notifications hold personal data in clear:\n%s", strings.Join(got, "\n"))
	}
	e, err := h.Privacy().Erase(ctx, "t1", data["t1"].alias, Reach{})
	if err != nil || e != (Erasure{Member: "p1", Profile: true, Aliases: 1}) {
		t.Fatalf("erase: %+v %v", e, err)
	}
	checkErased(t, h, data)
	if got := filesHolding(t, dir, data["t1"].strings()...); len(got) != 0 { // before any restart
		t.Fatalf("erased personal data on disk once the erasure answered:\n%s", strings.Join(got, "\n"))
	}
	h.Close()
	h = startHub(t, cfg)
	if _, err := h.replica(ctx, "t1", false); err != nil {
		t.Fatal(err)
	}
	checkErased(t, h, data)
	h.Close()
	if got := filesHolding(t, dir, data["t1"].strings()...); len(got) != 0 {
		t.Fatalf("erased personal data on disk:\n%s", strings.Join(got, "\n"))
	}
	// t2's snapshot holds its p1's data, sealed: the search above could
	// have found it in clear, and the keys open it (the closed hub's cache).
	snap, err := os.ReadFile(snapfile.In(dir).Path("t2"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := ledger.Decode(snap, h.snaps.keys.Ring("t2"))
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := st.Profile(data["t2"].alias); p.Name != data["t2"].name || bytes.Contains(snap, []byte(data["t2"].name)) {
		t.Fatalf("t2's snapshot: profile %+v", p)
	}
}

// allIn reports whether every finding of filesHolding is under dir.
func allIn(found []string, dir string) bool {
	for _, f := range found {
		if !strings.HasPrefix(f, dir+string(filepath.Separator)) {
			return false
		}
	}
	return true
}

// snapshotSeq returns the sequence of tenant's last snapshot written.
func snapshotSeq(t *testing.T, h *Hub, tenant string) uint64 {
	t.Helper()
	return openReplica(t, h, tenant).savedSeq.Load()
}

// checkErased checks that t1's p1 shows no personal data and t2's keeps
// its own.
func checkErased(t *testing.T, h *Hub, data map[string]personal) {
	t.Helper()
	if _, err := h.Privacy().Profile("t1", "p1", Reach{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("t1's profile: %v", err)
	}
	if _, err := h.Identity("t1", data["t1"].alias, Reach{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("t1's alias still resolves: %v", err)
	}
	pd, err := h.Privacy().PersonalData("t1", "p1", Reach{})
	if err != nil || pd.Profile != nil || len(pd.Entries) != 2 || slices.Contains(pd.Aliases, data["t1"].alias) {
		t.Errorf("t1's export after the erasure: %+v %v", pd, err)
	}
	s, err := h.Disputes().Standings("t1", "cup", 0, 10)
	if err != nil || s.Rows[0].Member != "p1" || s.Rows[0].Profile.Name != "" || s.Rows[0].Prize != "€100" {
		t.Errorf("t1's final standings: %+v %v", s.Rows, err)
	}
	for _, n := range notes(t, h, "t1") {
		for _, r := range n.Rows {
			if r.Member == "p1" && r.Name != "" {
				t.Errorf("t1's notification %s still names p1 %q", n.ID, r.Name)
			}
		}
	}
	pd, err = h.Privacy().PersonalData("t2", data["t2"].alias, Reach{})
	if err != nil || pd.Profile == nil || pd.Profile.Name != data["t2"].name || !slices.Equal(pd.Aliases, []string{data["t2"].alias}) {
		t.Errorf("t2's p1 lost its data: %+v %v", pd, err)
	}
	if s, _ := h.Disputes().Standings("t2", "cup", 0, 10); s.Rows[0].Profile.Name != data["t2"].name {
		t.Errorf("t2's final standings: %+v", s.Rows)
	}
}

// Erase returns once the snapshot holds the erasure, even where events
// applied after it leave no snapshot due (it awaits the erasure's seq, not
// the replica's latest).
func TestEraseReturnsWhileEventsFollow(t *testing.T) {
	h := startHub(t, Config{SnapshotEvery: 1 << 30, SnapshotInterval: time.Hour})
	ctx := testCtx(t)
	mustPut(t, h, "t1", "b", Settings{})
	mustSubmit(t, h, "t1", "b", Item{Member: "p1", Score: 1})
	if _, err := h.PutProfile(ctx, "t1", "p1", Profile{Name: "Erasable"}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // events applied while Erase runs
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
				if _, err := h.Submit(ctx, "t1", "b", []Item{{Member: fmt.Sprint("q", i), Score: 1}}); err != nil {
					t.Error(err)
					return
				}
			}
		}
	})
	ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := h.Privacy().Erase(ectx, "t1", "p1", Reach{})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
}

// TestAliasLoggedAsID: a tenant that submits, removes and disqualifies
// its member by a linked e-mail alias holds, byte for byte, the state of a
// twin tenant that does the same by the member's id, and no file but the
// snapshots (which hold the identity index) holds the alias: the log
// names the member by its id. An alias that names nobody yet is a new
// member's id and is logged as given.
func TestAliasLoggedAsID(t *testing.T) {
	dir := t.TempDir()
	clk := newClock(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	h := startHub(t, Config{Now: clk.now, DataDir: dir})
	ctx := testCtx(t)
	const alias = "email:qzxv.alias@mail.example"
	by := map[string]string{"t1": alias, "t2": "p1"}
	for _, tenant := range []string{"t1", "t2"} {
		mustPut(t, h, tenant, "b", Settings{})
		mustPut(t, h, tenant, "c", Settings{})
		mustSubmit(t, h, tenant, "b", Item{Member: "p1", Score: 1}, Item{Member: "p2", Score: 2})
		if _, err := h.Link(ctx, tenant, "p1", []string{alias}); err != nil {
			t.Fatal(err)
		}
		m := by[tenant]
		items := []Item{{Member: m, Score: 10, ID: "s1"}, {Member: "p3", Score: 3}}
		res := mustSubmit(t, h, tenant, "b", items...)
		if res[0].Member != "p1" || items[0].Member != m {
			t.Fatalf("%s: result %+v; the caller's items %+v", tenant, res[0], items)
		}
		if res := mustSubmit(t, h, tenant, "b", Item{Member: m, Score: 10, ID: "s1"}); !res[0].Duplicate {
			t.Fatalf("%s: the repeated id: %+v", tenant, res[0])
		}
		mustSubmit(t, h, tenant, "c", Item{Member: m, Score: 5}, Item{Member: "p2", Score: 4})
		if err := h.RemoveMember(ctx, tenant, "c", m); err != nil {
			t.Fatal(err)
		}
		act, err := h.Disputes().Disqualify(ctx, tenant, Amendment{Board: "b", Member: m, Reason: "ticket 1"})
		if err != nil || act.Member != "p1" {
			t.Fatalf("%s: disqualify: %+v %v", tenant, act, err)
		}
	}
	if a, b := fingerprint(t, h, "t1"), fingerprint(t, h, "t2"); !bytes.Equal(a, b) {
		t.Fatal("submitting by alias and by id leave different states")
	}
	if got := filesHolding(t, dir, alias); len(got) != 0 {
		t.Fatalf("a file holds the linked alias in clear:\n%s", strings.Join(got, "\n"))
	}
	mustSubmit(t, h, "t1", "b", Item{Member: "email:new@mail.example", Score: 1}) // names nobody: a new member's id
	if got := filesHolding(t, dir, "email:new@mail.example"); allIn(got, filepath.Join(dir, "snapshots")) {
		t.Fatal("a new member's id is on no file: the search above proves nothing")
	}
}
