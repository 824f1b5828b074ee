package identity

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// Run: go test -run '^$' -bench . -benchtime 2s ./identity/
//
// The peer is the obvious representation, a []string plus a
// map[string]uint32 sharing its strings, measured in the same binary.

var benchSizes = []struct {
	label string
	n     int
}{{"1e3", 1_000}, {"1e6", 1_000_000}}

// memberIDs returns n distinct 14-byte ids ("member-0000042") in a fixed
// shuffled order, so lookups do not walk memory in insertion order.
func memberIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("member-%07d", i)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	return ids
}

func buildIndex(ids []string) *Index {
	ix := New()
	for _, id := range ids {
		ix.Intern(id)
	}
	return ix
}

// peer is the map-based representation the Index is measured against.
type peer struct {
	names []string
	ids   map[string]uint32
}

func (p *peer) intern(id string) uint32 {
	if h, ok := p.ids[id]; ok {
		return h
	}
	s := strings.Clone(id)
	p.names = append(p.names, s)
	h := uint32(len(p.names))
	p.ids[s] = h
	return h
}

func buildPeer(ids []string) *peer {
	p := &peer{ids: make(map[string]uint32)}
	for _, id := range ids {
		p.intern(id)
	}
	return p
}

// cycle calls f with ids in turn for as long as b.Loop runs.
func cycle(b *testing.B, ids []string, f func(string)) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f(ids[i])
		if i++; i == len(ids) {
			i = 0
		}
	}
}

func BenchmarkInternExisting(b *testing.B) {
	for _, size := range benchSizes {
		ids := memberIDs(size.n)
		ix, p := buildIndex(ids), buildPeer(ids)
		b.Run("index/N="+size.label, func(b *testing.B) { cycle(b, ids, func(s string) { ix.Intern(s) }) })
		b.Run("peer=map/N="+size.label, func(b *testing.B) { cycle(b, ids, func(s string) { p.intern(s) }) })
	}
}

// BenchmarkInternNew interns b.N new ids into an empty index: the amortised
// cost of a first submission, table growth included.
func BenchmarkInternNew(b *testing.B) {
	b.Run("index", func(b *testing.B) {
		ids := memberIDs(b.N)
		ix := New()
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			ix.Intern(ids[i])
		}
	})
	b.Run("peer=map", func(b *testing.B) {
		ids := memberIDs(b.N)
		p := &peer{ids: make(map[string]uint32)}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			p.intern(ids[i])
		}
	})
}

func BenchmarkResolve(b *testing.B) {
	const n = 1_000_000
	ids := memberIDs(n)
	ix := buildIndex(ids)
	aliases := make([]string, n)
	misses := make([]string, n)
	for i, id := range ids {
		aliases[i] = "email:" + id + "@x.io"
		misses[i] = "nobody-" + id
		ix.Link(id, aliases[i:i+1])
	}
	p := buildPeer(ids)
	b.Run("member/N=1e6", func(b *testing.B) { cycle(b, ids, func(s string) { ix.Resolve(s) }) })
	b.Run("alias/N=1e6", func(b *testing.B) { cycle(b, aliases, func(s string) { ix.Resolve(s) }) })
	b.Run("miss/N=1e6", func(b *testing.B) { cycle(b, misses, func(s string) { ix.Resolve(s) }) })
	b.Run("peer=map/member/N=1e6", func(b *testing.B) { cycle(b, ids, func(s string) { _ = p.ids[s] }) })
}

func BenchmarkLink(b *testing.B) {
	ids := memberIDs(1_000_000)
	emails := make([]string, len(ids))
	for i, id := range ids {
		emails[i] = "email:" + id + "@x.io"
	}
	b.Run("new-member-with-alias", func(b *testing.B) {
		ix := New()
		i := 0
		cycle(b, ids, func(s string) {
			ix.Link(s, emails[i:i+1])
			if i++; i == len(ids) {
				ix, i = New(), 0 // start over rather than relink existing members
			}
		})
	})
	// A back end that links one placeholder alias to every member merges
	// everyone so far into each new member: O(1) per link by union by size,
	// where relabelling the collapsed member's aliases would be O(members).
	b.Run("shared-placeholder", func(b *testing.B) {
		ix := New()
		placeholder := []string{"device:0"}
		cycle(b, ids, func(s string) { ix.Link(s, placeholder) })
	})
}

// heapInUse returns the bytes of heap spans in use after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// BenchmarkBytesPerMember reports the heap an index of N members holds, per
// member (B/member), next to the peer's. "alias" adds one alias per member
// ("email:member-0000042@x.io"); its B/member covers both identifiers.
func BenchmarkBytesPerMember(b *testing.B) {
	const n = 1_000_000
	ids := memberIDs(n)
	aliases := make([]string, n)
	for i, id := range ids {
		aliases[i] = "email:" + id + "@x.io"
	}
	measure := func(b *testing.B, build func() any) {
		b.ReportAllocs()
		var per float64
		for b.Loop() {
			before := heapInUse()
			x := build()
			per = float64(heapInUse()-before) / n
			runtime.KeepAlive(x)
		}
		b.ReportMetric(per, "B/member")
	}
	b.Run("index/N=1e6", func(b *testing.B) { measure(b, func() any { return buildIndex(ids) }) })
	b.Run("peer=map/N=1e6", func(b *testing.B) { measure(b, func() any { return buildPeer(ids) }) })
	b.Run("index+alias/N=1e6", func(b *testing.B) {
		measure(b, func() any {
			ix := buildIndex(ids)
			for i, id := range ids {
				ix.Link(id, aliases[i:i+1])
			}
			return ix
		})
	})
}

func BenchmarkSnapshot(b *testing.B) {
	ix := buildIndex(memberIDs(100_000))
	data := mustMarshal(b, ix)
	b.Run("AppendBinary/N=1e5", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		buf := make([]byte, 0, len(data))
		for b.Loop() {
			buf, _ = ix.AppendBinary(buf[:0])
		}
	})
	b.Run("Decode/N=1e5", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := Decode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
