package hub

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
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
	if _, err := h.Profile("t1", "p1"); !errors.Is(err, ErrNotFound) {
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
	if got, err := h.Profile("t1", "p2"); err != nil || got != p {
		t.Fatalf("after the merge p2 has %+v, %v", got, err)
	}

	other := startHub(t, Config{Now: clk.now, NATSURL: url, DiscoverInterval: -1})
	if _, err := other.replica(ctx, "t1", false); err != nil {
		t.Fatal(err)
	}
	if got, _ := other.Profile("t1", "newbie"); got.Name != "Newbie" {
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
	r := h.lookup(tenant)
	if r == nil {
		t.Fatalf("tenant %s not open", tenant)
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	data, err := encodeState(r.st)
	if err != nil {
		t.Fatal(err)
	}
	st, err := decodeState(data)
	if err != nil {
		t.Fatalf("the snapshot does not decode: %v", err)
	}
	if again, _ := encodeState(st); string(again) != string(data) {
		t.Fatal("the snapshot does not round-trip")
	}
	return data
}

func TestProfileRefused(t *testing.T) {
	for _, tt := range []struct {
		p    Profile
		want string
	}{
		{Profile{}, "name: 0 bytes, want 1..64"},
		{Profile{Name: strings.Repeat("x", 65)}, "name: 65 bytes"},
		{Profile{Name: "a\x00b"}, "name: invalid UTF-8 or a control character"},
		{Profile{Name: "a\xff"}, "name: invalid UTF-8"},
		{Profile{Name: "a", Avatar: "http://cdn.example/a.png"}, "avatar: \"http://cdn.example/a.png\" is not an https URL"},
		{Profile{Name: "a", Avatar: "https://"}, "avatar: "},
		{Profile{Name: "a", Avatar: "https://u:p@cdn.example/a.png"}, "avatar: "},
		{Profile{Name: "a", Avatar: "https://cdn.example/" + strings.Repeat("a", 500)}, "avatar: 520 bytes, at most 512"},
		{Profile{Name: "a", Country: "XX"}, "country: \"XX\" is not an ISO 3166-1 alpha-2 code"},
		{Profile{Name: "a", Country: "M"}, "country: "},
		{Profile{Name: "a", Country: " M"}, "country: "},
	} {
		_, err := tt.p.normalize()
		var he *Error
		if !errors.As(err, &he) || !errors.Is(err, ErrBadRequest) || !strings.HasPrefix(he.Msg, tt.want) {
			t.Errorf("%+v: %v, want a bad request %q", tt.p, err, tt.want)
		}
	}
	if n := strings.Count(countryCodes, " ") - 1; n != 249 {
		t.Errorf("%d country codes, ISO 3166-1 assigns 249", n)
	}
}

// BenchmarkProfiles reports the heap one profile costs in a tenant of
// 100,000 profiled members (a 12-byte name, a 40-byte avatar URL, a
// country), beyond its member id.
func BenchmarkProfiles(b *testing.B) {
	const n = 100_000
	for range b.N {
		s := newState()
		for i := range n {
			if _, err := s.ix.Intern(fmt.Sprintf("member-%07d", i)); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for i := range n {
			ev := &event{Kind: evProfile, Member: fmt.Sprintf("member-%07d", i), At: 1,
				Profile: &Profile{Name: fmt.Sprintf("Player %06d", i), Avatar: fmt.Sprintf("https://cdn.example.com/a/%013d.png", i), Country: "MT"}}
			if err := s.applyProfile(uint64(i+1), ev); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/n, "B/profile")
		runtime.KeepAlive(s)
	}
}
