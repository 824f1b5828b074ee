package ledger

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
)

// BenchmarkManyBoards reports the heap that 1,000 board-windows of 10
// entries each cost in a tenant of 1,000,000 members (handles spread over
// the whole tenant, as a casino's small tournaments draw players), and the
// cost of one submission to such a board. heap-MB counts the boards only:
// the tenant's identities and its one large board are built first.
//
//	go test ./internal/ledger -run '^$' -bench 'ManyBoards' -benchtime 100000x -count 3
func BenchmarkManyBoards(b *testing.B) {
	const members, boards, entries = 1_000_000, 1000, 10
	st := buildState(members)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rng := rand.New(rand.NewPCG(1, 1))
	seq := st.seq
	for i := range boards {
		name := "t" + strconv.Itoa(i)
		set, _ := Settings{}.normalize()
		seq++
		st.Apply(seq, &Event{Kind: EvSettings, Board: name, Settings: &set})
		items := make([]Item, entries)
		for j := range items {
			items[j] = Item{Member: "m" + strconv.Itoa(rng.IntN(members)), Score: float64(rng.IntN(1000))}
		}
		seq++
		st.Apply(seq, &Event{Kind: EvSubmit, At: 1, Board: name, Items: items})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heapMB := float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
	evs := make([]*Event, 64)
	for i := range evs {
		evs[i] = &Event{Kind: EvSubmit, At: 1, Board: "t" + strconv.Itoa(rng.IntN(boards)),
			Items: []Item{{Member: "m" + strconv.Itoa(rng.IntN(members)), Score: float64(rng.IntN(1000))}}}
	}
	b.ResetTimer()
	for i := range b.N {
		seq++
		st.Apply(seq, evs[i%len(evs)])
	}
	b.StopTimer()
	b.ReportMetric(heapMB, "heap-MB")
	runtime.KeepAlive(st)
}
