package loadtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ReadConfig shapes a read load: preload a board, then measure read
// latency while an optional paced write load runs. The zero value of every
// field but Target has a default.
type ReadConfig struct {
	Target Target
	// Members is the board size to preload, as members m0 … m<N-1> in
	// batches of 1,000. Preloading is skipped where the board already has
	// at least that many. Zero means 1,000,000.
	Members int
	// Readers is the number of concurrent reading clients. Zero means 4.
	Readers int
	// ReadRate paces the reads over all readers, per second; each reader
	// waits for its reply before the next read. Zero means 2,000;
	// negative means unpaced (each reader sends back to back).
	ReadRate float64
	// WriteRate is the background write load in submissions per second,
	// sent as batches of WriteBatch random updates of existing members by
	// WriteClients clients. Zero means no writes.
	WriteRate    float64
	WriteBatch   int // zero means 100
	WriteClients int // zero means 8
	// Duration bounds the measured phase. Zero means 10 s.
	Duration time.Duration
	// MaxReads bounds the measured phase in reads. Zero means 10,000,000.
	MaxReads int64
}

func (c ReadConfig) withDefaults() ReadConfig {
	c.Members = cmpOr(c.Members, 1_000_000)
	c.Readers = cmpOr(c.Readers, 4)
	c.ReadRate = cmpOr(c.ReadRate, 2000)
	c.WriteBatch = cmpOr(c.WriteBatch, 100)
	c.WriteClients = cmpOr(c.WriteClients, 8)
	c.Duration = cmpOr(c.Duration, 10*time.Second)
	c.MaxReads = cmpOr(c.MaxReads, 10_000_000)
	return c
}

// readKinds are the reads measured, in rotation.
var readKinds = []string{"top", "member", "around"}

// ReadReport is what a read load measured.
type ReadReport struct {
	Members       int           // board members when the measured phase began
	Preload       time.Duration // 0 where skipped
	Elapsed       time.Duration
	Kinds         map[string]Latency // by read kind
	All           Latency
	ReadErrors    map[string]int
	WriteRate     float64 // target submissions/s
	WriteAchieved float64 // acknowledged submissions/s
	WriteLatency  Latency
	WriteErrors   map[string]int
}

func (r ReadReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "read: %d members (preload %v), %v\n", r.Members, r.Preload.Round(time.Millisecond), r.Elapsed.Round(time.Millisecond))
	for _, k := range readKinds {
		fmt.Fprintf(&b, "  %-7s %v\n", k, r.Kinds[k])
	}
	fmt.Fprintf(&b, "  %-7s %v\n  read errors %s\n", "all", r.All, errorList(r.ReadErrors))
	fmt.Fprintf(&b, "  writes: target %.0f/s, acknowledged %.0f/s, batch latency %v, errors %s\n",
		r.WriteRate, r.WriteAchieved, r.WriteLatency, errorList(r.WriteErrors))
	return b.String()
}

// RunRead preloads the board, starts the background writes, measures reads
// for cfg.Duration, stops the writes and reports.
func RunRead(ctx context.Context, cfg ReadConfig) (ReadReport, error) {
	cfg = cfg.withDefaults()
	c, err := newClient(cfg.Target, cfg.Readers+cfg.WriteClients+8)
	if err != nil {
		return ReadReport{}, err
	}
	defer c.close()
	rep := ReadReport{WriteRate: cfg.WriteRate}
	if rep.Preload, err = preload(ctx, c, cfg.Members, randomScore); err != nil {
		return rep, err
	}
	if rep.Members, err = c.members(ctx); err != nil {
		return rep, err
	}
	wctx, stopWrites := context.WithCancel(ctx)
	writes := startWrites(wctx, c, cfg)
	time.Sleep(200 * time.Millisecond) // let the write load reach its pace
	recs, elapsed := readLoad(ctx, c, cfg)
	stopWrites()
	w := writes()
	rep.Elapsed = elapsed
	rep.Kinds = map[string]Latency{}
	all := make([]*recorder, 0, len(recs))
	var errs []*recorder
	for k, rs := range recs {
		m := merge(rs)
		rep.Kinds[k] = summarize(m.samples)
		all = append(all, m)
		errs = append(errs, m)
	}
	merged := merge(all)
	rep.All, rep.ReadErrors = summarize(merged.samples), merge(errs).errors
	rep.WriteAchieved = float64(w.rec.items) / w.elapsed.Seconds()
	rep.WriteLatency, rep.WriteErrors = summarize(w.rec.samples), w.rec.errors
	return rep, nil
}

// preload fills the board with members m0 … m<n-1>, scoring member j
// scoreOf(r, j) (r: the sending client's own generator), 1,000 per request
// from 4 clients, unless it holds n already. The board keeps the latest
// score (policy latest), so every later write replaces its member's score.
func preload(ctx context.Context, c *client, n int, scoreOf func(r *rand.Rand, j int) float64) (time.Duration, error) {
	if err := c.ensureBoard(ctx, `{"policy":"latest"}`); err != nil {
		return 0, err
	}
	if have, err := c.members(ctx); err != nil || have >= n {
		return 0, err
	}
	start := time.Now()
	var next atomic.Int64
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for i := range 4 {
		rng := rand.New(rand.NewPCG(7, uint64(i)))
		wg.Go(func() {
			for ctx.Err() == nil {
				from := int(next.Add(1000)) - 1000
				if from >= n {
					return
				}
				items := make([]score, 0, 1000)
				for j := from; j < min(from+1000, n); j++ {
					items = append(items, score{Member: "m" + strconv.Itoa(j), Score: scoreOf(rng, j)})
				}
				if class := submitReplicated(ctx, c, items); class != "" {
					errs <- fmt.Errorf("loadtest: preload at m%d: %s", from, class)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return time.Since(start), ctx.Err()
}

// submitReplicated submits items, again where the node answered 404: on
// a cluster the batches go to the nodes in turn, and a node that has not
// yet applied the board's creation does not know the board (for at most
// 5 s, then the 404 is the error).
func submitReplicated(ctx context.Context, c *client, items []score) string {
	for range 50 {
		_, class := (gatewaySink{c}).submit(ctx, items)
		if class != "404" {
			return class
		}
		sleep(ctx, 100*time.Millisecond)
	}
	return "404"
}

// randomScore is a preload's score for a read run: anywhere in 0…1e9.
func randomScore(r *rand.Rand, _ int) float64 { return float64(r.IntN(1_000_000_000)) }

type writeResult struct {
	rec     *recorder
	elapsed time.Duration
}

// startWrites runs the paced background writes until ctx ends; the
// returned func waits for them and reports.
func startWrites(ctx context.Context, c *client, cfg ReadConfig) func() writeResult {
	if cfg.WriteRate <= 0 {
		return func() writeResult { return writeResult{rec: newRecorder(0), elapsed: time.Second} }
	}
	interval := time.Duration(float64(time.Second) * float64(cfg.WriteBatch*cfg.WriteClients) / cfg.WriteRate)
	recs := make([]*recorder, cfg.WriteClients)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range recs {
		recs[i] = newRecorder(1_000_000)
		w := &submitter{c: c, cfg: SubmitConfig{Batch: cfg.WriteBatch, Members: cfg.Members}, rec: recs[i],
			rng: rand.New(rand.NewPCG(uint64(start.UnixNano()), uint64(i)))}
		offset := interval * time.Duration(i) / time.Duration(cfg.WriteClients)
		wg.Go(func() { w.paced(ctx, start.Add(offset), interval) })
	}
	return func() writeResult {
		wg.Wait()
		return writeResult{rec: merge(recs), elapsed: time.Since(start)}
	}
}

// paced sends one batch every interval from first on until ctx ends. A
// worker that falls behind sends back to back, and skips ahead rather than
// bursting when it is more than one interval late.
func (w *submitter) paced(ctx context.Context, first time.Time, interval time.Duration) {
	next := first
	for ctx.Err() == nil {
		if d := time.Until(next); d > 0 {
			sleep(ctx, d)
			continue
		}
		if time.Since(next) > interval {
			next = time.Now()
		}
		next = next.Add(interval)
		items := w.batch()
		t0 := time.Now()
		st, err := w.c.submit(context.WithoutCancel(ctx), items)
		if err == nil && st == http.StatusOK {
			w.rec.success(time.Since(t0), len(w.items))
		} else {
			w.rec.fail(classify(st, err))
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// readLoad runs cfg.Readers readers for cfg.Duration or cfg.MaxReads and
// returns their recorders by read kind.
func readLoad(ctx context.Context, c *client, cfg ReadConfig) (map[string][]*recorder, time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var budget atomic.Int64
	budget.Store(cfg.MaxReads)
	var interval time.Duration
	if cfg.ReadRate > 0 {
		interval = time.Duration(float64(time.Second) * float64(cfg.Readers) / cfg.ReadRate)
	}
	recs := map[string][]*recorder{}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range cfg.Readers {
		r := &reader{c: c, n: cfg.Members, rng: rand.New(rand.NewPCG(uint64(start.UnixNano()), uint64(i))), recs: map[string]*recorder{}}
		for _, k := range readKinds {
			r.recs[k] = newRecorder(2_000_000 / cfg.Readers)
			recs[k] = append(recs[k], r.recs[k])
		}
		first := start.Add(interval * time.Duration(i) / time.Duration(cfg.Readers))
		wg.Go(func() { r.loop(ctx, &budget, first, interval) })
	}
	wg.Wait()
	return recs, time.Since(start)
}

// reader is one reading client. Owned by one goroutine.
type reader struct {
	c    *client
	n    int // members m0 … m<n-1>
	rng  *rand.Rand
	recs map[string]*recorder
}

func (r *reader) loop(ctx context.Context, budget *atomic.Int64, next time.Time, interval time.Duration) {
	for i := 0; ctx.Err() == nil && budget.Add(-1) >= 0; i++ {
		if d := time.Until(next); d > 0 {
			sleep(ctx, d)
		}
		if time.Since(next) > interval {
			next = time.Now()
		}
		next = next.Add(interval)
		kind := readKinds[i%len(readKinds)]
		t0 := time.Now()
		st, err := r.c.read(ctx, kind, r.member())
		switch {
		case err == nil && st == http.StatusOK:
			r.recs[kind].success(time.Since(t0), 1)
		case ctx.Err() != nil:
			return
		default:
			r.recs[kind].fail(kind + ":" + classify(st, err))
		}
	}
}

// member picks the member of a member or around read.
func (r *reader) member() string { return "m" + strconv.Itoa(r.rng.IntN(r.n)) }
