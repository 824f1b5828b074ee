package ledger

import (
	"runtime"
	"strconv"
	"testing"
)

// heapAfter returns the heap in use after f, less the heap before, once
// garbage is collected; keep holds what f built alive meanwhile.
func heapAfter(f func() any) (int64, any) {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	keep := f()
	runtime.GC()
	runtime.ReadMemStats(&b)
	return int64(b.HeapAlloc) - int64(a.HeapAlloc), keep
}

// TestMemoryPerThing measures the heap one member, one row, one profile
// and one held item cost (ids of 7 to 8 bytes), prints them, and checks
// that quota.go's constants, which rankwire_tenant_memory_bytes multiplies,
// are within a factor of two of them. Run with -v to read the numbers.
func TestMemoryPerThing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 50,000 members")
	}
	const n, nHeld = 50_000, 20_000
	mem, kept := heapAfter(func() any { return buildState(n) }) // n members, n rows of one window
	st := kept.(*State)
	perMemberRow := float64(mem) / n
	st.Apply(2_000, &Event{Kind: EvSettings, Board: "s2", Settings: &Settings{}})
	rows, _ := heapAfter(func() any { // the same members on a second board: rows alone
		items := make([]Item, MaxBatch)
		for i := 0; i < n; i += MaxBatch {
			for j := range items {
				items[j] = Item{Member: "m" + strconv.Itoa(i+j), Score: float64(j)}
			}
			st.Apply(uint64(3_000+i), &Event{Kind: EvSubmit, Board: "s2", Items: items})
		}
		return nil
	})
	perRow := float64(rows) / n
	prof, _ := heapAfter(func() any {
		for i := range n {
			st.Apply(uint64(1_000_000+i), &Event{Kind: EvProfile, Member: "m" + strconv.Itoa(i), Profile: &Profile{Name: "Player " + strconv.Itoa(i), Country: "MT"}})
		}
		return nil
	})
	perProfile := float64(prof) / n
	set := &Settings{Rules: &Rules{MaxScore: f64(-1)}}
	st.Apply(1_500_000, &Event{Kind: EvSettings, Board: "h", Settings: set})
	held, _ := heapAfter(func() any {
		items := make([]Item, MaxBatch)
		for i := 0; i < nHeld; i += MaxBatch {
			for j := range items {
				items[j] = Item{Member: "m" + strconv.Itoa(i+j), Score: 1}
			}
			st.Apply(uint64(2_000_000+i), &Event{Kind: EvSubmit, Board: "h", Items: items})
		}
		return nil
	})
	perHeld := float64(held) / nHeld
	alias, _ := heapAfter(func() any {
		for i := range n / 4 { // 4 aliases each, of ids like "email:m12345@x.io"
			m := "m" + strconv.Itoa(i)
			st.Apply(uint64(3_000_000+i), &Event{Kind: EvLink, Member: m,
				Aliases: []string{"email:" + m + "@x.io", "steam:" + m, "a:" + m, "b:" + m}})
		}
		return nil
	})
	perAlias := float64(alias) / n
	runtime.KeepAlive(st)
	t.Logf("bytes per member with its row %.0f (estimate %d), per row %.0f (%d), per profile %.0f (%d), per held item %.0f (%d), per alias %.0f (%d)",
		perMemberRow, memPerMember+memPerEntry, perRow, memPerEntry, perProfile, memPerProfile, perHeld, memPerHeld, perAlias, memPerAlias)
	for _, c := range []struct {
		what     string
		got, est float64
	}{
		{"member with its row", perMemberRow, memPerMember + memPerEntry},
		{"row", perRow, memPerEntry},
		{"profile", perProfile, memPerProfile},
		{"held item", perHeld, memPerHeld},
		{"alias", perAlias, memPerAlias},
	} {
		if c.got > 2*c.est || c.got < c.est/2 {
			t.Errorf("%s: %.0f bytes measured, estimate %.0f: update quota.go", c.what, c.got, c.est)
		}
	}
}
