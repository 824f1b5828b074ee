package board_test

// The board against its peers, in one binary so that every ratio comes from
// one run on one machine: Redis sorted sets over loopback (one command per
// round trip, and in pipelines of 1000), a counted B-tree and the naive
// re-sorted slice. docs/BENCHMARKS.md quotes the results.
//
// Check the harness at small sizes (a minute or two, every peer):
//
//	go test -run '^$' -bench 'BenchmarkPeers/.*/n=1000$/' -benchtime=2000x ./board/
//	go test -run '^$' -bench 'BenchmarkPeers/.*/n=100000$/' -benchtime=2000x ./board/
//
// The table at one million members (setup, done once per impl and shared by
// the ops, takes about a minute):
//
//	go test -run '^$' -bench 'BenchmarkPeers/.*/n=1000000$/' -timeout 60m ./board/
//	go test -run '^$' -bench 'BenchmarkMemory/n=1000000$/' -benchtime=1x ./board/
//	go test -run '^$' -bench 'BenchmarkDecode/n=1000000$' ./board/
//
// Ten million members (several GB of RAM; the Decode target is 10 s):
//
//	RANKWIRE_BENCH_10M=1 go test -run '^$' -bench 'BenchmarkDecode/n=10000000$' -benchtime=1x -timeout 60m ./board/
//	RANKWIRE_BENCH_10M=1 go test -run '^$' -bench 'BenchmarkPeers/.*/n=10000000$/' -timeout 120m ./board/
//
// Each path element of -bench is an unanchored regexp: "n=1000" also matches
// n=1000000 and "impl=redis" also matches impl=redis-pipelined, hence the $.
// Data sets live for one run of a top-level benchmark, so -count=k builds
// them k times. The test binary's -timeout alarm does not cover benchmarks,
// but go test kills a binary that outlasts -timeout by a minute (default
// 10m), hence the -timeout on long runs.
//
// The Redis cases need redis-server on PATH (Debian: apt-get install
// redis-server) and skip without it. Each top-level benchmark starts its own
// server on a free 127.0.0.1 port with persistence off and kills it when it
// ends, pass or fail; on Linux the kernel also kills it if the test binary
// dies first (a panic, or go test killing it).

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/rankwire/rankwire/board"
)

// maxScore bounds the random scores: integers in [0, maxScore], like points.
const maxScore = 1_000_000_000

// benchSizes are the board sizes; 10M joins them when RANKWIRE_BENCH_10M=1.
func benchSizes() []int {
	sizes := []int{1_000, 100_000, 1_000_000}
	if os.Getenv("RANKWIRE_BENCH_10M") == "1" {
		sizes = append(sizes, 10_000_000)
	}
	return sizes
}

// peerOpNames are the measured operations:
//   - update: a random existing member gets a random new score;
//   - insert: a new member with a random score (see insertBatches);
//   - rank: the rank of a random member;
//   - at: the entry at a random rank;
//   - top100: the first 100 rows;
//   - around5: the rows within 5 ranks of a random member.
var peerOpNames = []string{"update", "insert", "rank", "at", "top100", "around5"}

// peerOps maps an op name to a function that times b.N such operations on a
// loaded data set, drawing members, ranks and scores from r.
type peerOps map[string]func(b *testing.B, r *rand.Rand)

// A peerImpl is one implementation under comparison.
type peerImpl struct {
	name string
	maxN int      // the largest size it runs at; 0 means no limit
	ops  []string // the ops its API allows cheaply; nil means all
	// load returns the ops on a data set of members 1..n with peerScores(n).
	load func(env *peerEnv, b *testing.B, n int) peerOps
}

func (p peerImpl) offers(op string, n int) bool {
	return (p.maxN == 0 || n <= p.maxN) && (p.ops == nil || slices.Contains(p.ops, op))
}

var peerImpls = []peerImpl{
	{name: "board", load: loadBoardPeer},
	{name: "redis", load: loadRedisPeer},
	{name: "redis-pipelined", load: loadRedisPipelinedPeer},
	// tidwall/btree has GetAt but no rank-of-item lookup: no rank, no around5.
	{name: "btree", ops: []string{"update", "insert", "at", "top100"}, load: loadBTreePeer},
	{name: "naive", maxN: naiveMaxN, load: loadNaivePeer},
}

// BenchmarkPeers times each op on each impl at each size:
// BenchmarkPeers/op=OP/n=N/impl=IMPL.
func BenchmarkPeers(b *testing.B) {
	env := newPeerEnv(b)
	for _, op := range peerOpNames {
		b.Run("op="+op, func(b *testing.B) {
			for _, n := range benchSizes() {
				b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
					for _, impl := range peerImpls {
						if impl.offers(op, n) {
							b.Run("impl="+impl.name, func(b *testing.B) { env.run(b, impl, op, n) })
						}
					}
				})
			}
		})
	}
}

// peerEnv holds what one run of a top-level benchmark shares: the loaded data
// sets, so that a million members are loaded once per impl and not once per
// op, and the Redis server. Benchmarks run one at a time, so it needs no lock.
type peerEnv struct {
	top      *testing.B // owns the cleanups
	loaded   map[string]peerOps
	redis    *redisServer // started on first use
	redisErr error
	redisSet map[int]string // key of the sorted set loaded with n members
}

func newPeerEnv(top *testing.B) *peerEnv {
	return &peerEnv{top: top, loaded: map[string]peerOps{}, redisSet: map[int]string{}}
}

// run times b.N ops of impl on its data set of n members, loading it first
// if this is its first use.
func (env *peerEnv) run(b *testing.B, impl peerImpl, op string, n int) {
	id := fmt.Sprintf("%s/%d", impl.name, n)
	ops, ok := env.loaded[id]
	if !ok {
		ops = impl.load(env, b, n)
		env.loaded[id] = ops
	}
	bench, ok := ops[op]
	if !ok {
		b.Fatalf("impl %s lists op %s but does not implement it", impl.name, op)
	}
	r := rand.New(rand.NewPCG(2, uint64(n)))
	b.ReportAllocs()
	b.ResetTimer()
	bench(b, r)
}

// peerScores returns a source of the initial scores of members 1, 2, …, n in
// turn, the same for every impl.
func peerScores(n int) func() float64 {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	return func() float64 { return randScore(r) }
}

func randScore(r *rand.Rand) float64 { return float64(r.IntN(maxScore + 1)) }

// randMember returns one of members 1..n.
func randMember(r *rand.Rand, n int) uint32 { return uint32(1 + r.IntN(n)) }

// insertBatch is how many new members insertBatches adds before it removes
// them again: the set stays within 10% of n members (0.1% from n=1M).
func insertBatch(n int) int { return min(1000, max(100, n/10)) }

// insertBatches times b.N inserts of new members. insert adds members first,
// first+1, …, first+k-1 (first is n+1) with random scores; after each batch
// the timer stops and remove takes them out again, so that n stays the size
// being measured however large b.N grows.
func insertBatches(b *testing.B, n int, insert, remove func(first uint32, k int)) {
	first := uint32(n + 1)
	for done := 0; done < b.N; {
		k := min(insertBatch(n), b.N-done)
		insert(first, k)
		done += k
		b.StopTimer()
		remove(first, k)
		b.StartTimer()
	}
}

// peerLess orders entries as a board with the zero Config does: higher score,
// higher subscore, earlier sequence, lower member handle.
func peerLess(a, b board.Entry) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.Subscore != b.Subscore {
		return a.Subscore > b.Subscore
	}
	if a.Seq != b.Seq {
		return a.Seq < b.Seq
	}
	return a.Member < b.Member
}

// boardPeer is ours: a board with the latest policy, so that every update
// is a move.
type boardPeer struct {
	board *board.Board
	n     int
	seq   uint64 // the last sequence submitted: sequences never decrease
	rows  []board.Row
}

var peerConfig = board.Config{Policy: board.Latest}

// buildBoard returns a board of members 1..n with peerScores(n) at sequences
// 1..n, with room for n+extra members reserved before the first insert.
func buildBoard(b testing.TB, n, extra int) *board.Board {
	bd, err := board.New(peerConfig)
	if err != nil {
		b.Fatal(err)
	}
	bd.Grow(n + extra)
	next := peerScores(n)
	for m := 1; m <= n; m++ {
		s := board.Submission{Member: uint32(m), Score: next(), Seq: uint64(m)}
		if _, err := bd.Submit(s); err != nil {
			b.Fatal(err)
		}
	}
	return bd
}

func loadBoardPeer(_ *peerEnv, b *testing.B, n int) peerOps {
	bd := buildBoard(b, n, insertBatch(n))
	if err := bd.Check(); err != nil {
		b.Fatalf("the loaded board is broken: %v", err)
	}
	p := &boardPeer{board: bd, n: n, seq: uint64(n), rows: make([]board.Row, 0, 100)}
	return peerOps{
		"update": p.update, "insert": p.insert, "rank": p.rank,
		"at": p.at, "top100": p.top100, "around5": p.around5,
	}
}

func (p *boardPeer) submit(b *testing.B, m uint32, r *rand.Rand) {
	p.seq++
	if _, err := p.board.Submit(board.Submission{Member: m, Score: randScore(r), Seq: p.seq}); err != nil {
		b.Fatal(err)
	}
}

func (p *boardPeer) update(b *testing.B, r *rand.Rand) {
	for range b.N {
		p.submit(b, randMember(r, p.n), r)
	}
}

func (p *boardPeer) insert(b *testing.B, r *rand.Rand) {
	insertBatches(b, p.n, func(first uint32, k int) {
		for m := range uint32(k) {
			p.submit(b, first+m, r)
		}
	}, func(first uint32, k int) {
		for m := range uint32(k) {
			p.board.Remove(first + m)
		}
	})
}

func (p *boardPeer) rank(b *testing.B, r *rand.Rand) {
	for range b.N {
		if _, ok := p.board.Rank(randMember(r, p.n)); !ok {
			b.Fatal("a member is missing")
		}
	}
}

func (p *boardPeer) at(b *testing.B, r *rand.Rand) {
	for range b.N {
		if _, ok := p.board.At(1 + r.IntN(p.n)); !ok {
			b.Fatal("a rank is missing")
		}
	}
}

func (p *boardPeer) top100(b *testing.B, _ *rand.Rand) {
	for range b.N {
		p.rows = p.board.Range(0, 100, p.rows[:0])
	}
	if len(p.rows) != min(100, p.n) {
		b.Fatalf("top100 returned %d rows", len(p.rows))
	}
}

func (p *boardPeer) around5(b *testing.B, r *rand.Rand) {
	for range b.N {
		var ok bool
		if p.rows, ok = p.board.Around(randMember(r, p.n), 5, p.rows[:0]); !ok {
			b.Fatal("a member is missing")
		}
	}
}

// BenchmarkMemory builds each impl's data set of n members, as the peers
// load it, and reports what one build holds per member (B/member): the
// growth of the Go heap in use across the build, each side measured after a
// full collection, for the in-process impls; of used_memory in INFO memory
// for Redis. ns/op is one build of all n members (for Redis, sent in ZADDs of
// 1000 members); -benchtime=1x is enough at 1M.
//
// Like for like: board and btree include their member index; Redis also
// stores each member's name (here 1–8 digits), which the board leaves to the
// identity index.
func BenchmarkMemory(b *testing.B) {
	env := newPeerEnv(b)
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.Run("impl=board", func(b *testing.B) {
				heapPerMember(b, n, func() any { return buildBoard(b, n, 0) })
			})
			b.Run("impl=btree", func(b *testing.B) {
				heapPerMember(b, n, func() any { return buildBTree(n, 0) })
			})
			if n <= naiveMaxN {
				b.Run("impl=naive", func(b *testing.B) {
					heapPerMember(b, n, func() any { return buildNaive(n, 0) })
				})
			}
			b.Run("impl=redis", func(b *testing.B) { env.redisPerMember(b, n) })
		})
	}
}

// heapPerMember times b.N calls of build, which builds a data set of n
// members, and reports the heap in use that the first one holds, per member.
func heapPerMember(b *testing.B, n int, build func() any) {
	b.ReportAllocs()
	var held int64
	for i := range b.N {
		if i > 0 {
			build()
			continue
		}
		b.StopTimer()
		before := heapInuse()
		b.StartTimer()
		x := build()
		b.StopTimer()
		held = heapInuse() - before
		runtime.KeepAlive(x)
		b.StartTimer()
	}
	b.ReportMetric(float64(held)/float64(n), "B/member")
}

// heapInuse returns the bytes in in-use heap spans after a full collection.
func heapInuse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// BenchmarkDecode times rebuilding a board of n members from its snapshot
// (AppendBinary), the restart path. The target is 10M members in 10 s.
func BenchmarkDecode(b *testing.B) {
	snaps := map[int][]byte{} // built once per size, not once per b.N
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			snap, ok := snaps[n]
			if !ok {
				var err error
				if snap, err = buildBoard(b, n, 0).AppendBinary(nil); err != nil {
					b.Fatal(err)
				}
				snaps[n] = snap
			}
			b.SetBytes(int64(len(snap)))
			b.ReportAllocs()
			b.ResetTimer()
			var bd *board.Board
			for range b.N {
				var err error
				if bd, err = board.Decode(snap, peerConfig); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if bd.Len() != n {
				b.Fatalf("decoded %d members, want %d", bd.Len(), n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/member")
			b.ReportMetric(float64(len(snap))/float64(n), "snapshot-B/member")
		})
	}
}
