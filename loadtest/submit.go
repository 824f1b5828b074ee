package loadtest

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	rwclient "github.com/rankwire/rankwire/client"
)

// SubmitConfig shapes a submit load. The zero value of every field but
// Target has a default.
type SubmitConfig struct {
	Target Target
	// Clients is the number of concurrent HTTP clients, each with its own
	// keep-alive connection and one request in flight. Zero means 64.
	Clients int
	// Batch is the number of items per request; 1 sends the single form.
	// Zero means 1.
	Batch int
	// Duration bounds the run. Zero means 10 s.
	Duration time.Duration
	// MaxRequests bounds the run in requests over all clients. Zero means
	// 100,000,000.
	MaxRequests int64
	// Members is the number of distinct members submissions pick from at
	// random. Zero means every submission names a new member, so that the
	// board's size grows by exactly the acknowledged submissions.
	Members int
	// Progress receives a line per second while the load runs. Nil means none.
	Progress io.Writer
	// Failover gives each client every gateway of Target.URL, starting at
	// its own, with the SDK's failover: a request that a gateway fails (a
	// 503, no connection, no answer within AttemptTimeout) goes to the
	// next with the same idempotency ids. Without it each request goes to
	// one gateway, once, and its failure is counted as that gateway's.
	Failover bool
	// AttemptTimeout is the SDK's per-attempt deadline with Failover. Zero
	// means the SDK's default for writes (3 s).
	AttemptTimeout time.Duration
}

func (c SubmitConfig) withDefaults() SubmitConfig {
	c.Clients = cmpOr(c.Clients, 64)
	c.Batch = cmpOr(c.Batch, 1)
	c.Duration = cmpOr(c.Duration, 10*time.Second)
	c.MaxRequests = cmpOr(c.MaxRequests, 100_000_000)
	return c
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// SubmitReport is what a submit load measured.
type SubmitReport struct {
	Clients, Batch int
	Elapsed        time.Duration
	Requests       int            // acknowledged (200) requests
	Submissions    int            // acknowledged items
	Errors         map[string]int // failed requests by status
	Latency        Latency        // of acknowledged requests
	WriteGaps      WriteGaps      // each client's longest time without an acknowledged write
	BoardBefore    int            // board members before the load
	BoardAfter     int            // and after
}

// SubmissionsPerSecond is acknowledged items per second of the run.
func (r SubmitReport) SubmissionsPerSecond() float64 {
	return float64(r.Submissions) / r.Elapsed.Seconds()
}

// RequestsPerSecond is acknowledged requests per second of the run.
func (r SubmitReport) RequestsPerSecond() float64 {
	return float64(r.Requests) / r.Elapsed.Seconds()
}

func (r SubmitReport) String() string {
	return fmt.Sprintf("submit: %d clients, batch %d, %v\n"+
		"  submissions/s %.0f   requests/s %.0f   (%d submissions, %d requests)\n"+
		"  latency %v\n  longest write gap per client: %v\n  errors %s\n  board members %d -> %d (+%d)\n",
		r.Clients, r.Batch, r.Elapsed.Round(time.Millisecond),
		r.SubmissionsPerSecond(), r.RequestsPerSecond(), r.Submissions, r.Requests,
		r.Latency, r.WriteGaps, errorList(r.Errors), r.BoardBefore, r.BoardAfter, r.BoardAfter-r.BoardBefore)
}

// RunSubmit creates the board where missing, runs the submit load until
// cfg.Duration or cfg.MaxRequests or ctx ends, and reports.
func RunSubmit(ctx context.Context, cfg SubmitConfig) (SubmitReport, error) {
	cfg = cfg.withDefaults()
	c, err := newClient(cfg.Target, cfg.Clients)
	if err != nil {
		return SubmitReport{}, err
	}
	defer c.close()
	if err := c.ensureBoard(ctx, `{}`); err != nil {
		return SubmitReport{}, err
	}
	if err := c.awaitBoard(ctx); err != nil {
		return SubmitReport{}, err
	}
	rep := SubmitReport{Clients: cfg.Clients, Batch: cfg.Batch}
	if rep.BoardBefore, err = c.members(ctx); err != nil {
		return rep, err
	}
	var sdks []*rwclient.Client
	if cfg.Failover {
		if sdks, err = failoverClients(cfg.Target, c, cfg.Clients, cfg.AttemptTimeout); err != nil {
			return rep, err
		}
		c.counter = sdks[0] // the size after the load, past a gateway that a fault took
	}
	rec, gaps, elapsed := submitLoad(ctx, c, sdks, cfg)
	rep.Elapsed, rep.Requests, rep.Submissions, rep.WriteGaps = elapsed, rec.ok, rec.items, gaps
	rep.Errors, rep.Latency = rec.errors, summarize(rec.samples)
	rep.BoardAfter, err = c.members(ctx)
	return rep, err
}

// submitLoad runs cfg.Clients workers until the deadline or the request
// cap, worker i through sdks[i] where given. Requests in flight at the
// deadline finish (bounded by the client's timeout), so that every
// submission the gateway acknowledged is counted.
func submitLoad(ctx context.Context, c *client, sdks []*rwclient.Client, cfg SubmitConfig) (*recorder, WriteGaps, time.Duration) {
	var budget, done atomic.Int64
	budget.Store(cfg.MaxRequests)
	stopProgress := progress(ctx, cfg.Progress, &done, int64(cfg.Batch), "submissions/s")
	recs := make([]*recorder, cfg.Clients)
	gaps := make(WriteGaps, cfg.Clients)
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	var wg sync.WaitGroup
	for i := range recs {
		recs[i] = newRecorder(4_000_000 / cfg.Clients)
		w := &submitter{c: c, cfg: cfg, rec: recs[i], prefix: run + "-w" + strconv.Itoa(i) + "-",
			rng: rand.New(rand.NewPCG(uint64(start.UnixNano()), uint64(i))), gap: newGapClock(start)}
		if sdks != nil {
			w.sdk = sdks[i]
		}
		wg.Go(func() {
			w.loop(ctx, deadline, &budget, &done)
			end := time.Now()
			if end.After(deadline) {
				end = deadline // a request answered after it counts, the wait past it not
			}
			gaps[i] = w.gap.end(end)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()
	return merge(recs), gaps, elapsed
}

// submitter is one client of a submit load. Owned by one goroutine.
type submitter struct {
	c      *client
	cfg    SubmitConfig
	rec    *recorder
	prefix string // member id prefix, unique per run and worker
	next   int    // next member number with cfg.Members == 0
	rng    *rand.Rand
	items  []score
	sdk    *rwclient.Client // with Failover: this worker's own client of every gateway
	gap    gapClock
}

func (w *submitter) loop(ctx context.Context, deadline time.Time, budget, done *atomic.Int64) {
	for ctx.Err() == nil && time.Now().Before(deadline) && budget.Add(-1) >= 0 {
		items := w.batch()
		t0 := time.Now()
		st, err := w.submit(ctx, items)
		switch {
		case err == nil && st == http.StatusOK:
			w.gap.ack(time.Now())
			w.rec.success(time.Since(t0), len(w.items))
			done.Add(1)
		case ctx.Err() != nil:
			return // cancelled by the caller: neither success nor error
		default:
			w.rec.fail(classify(st, err))
		}
	}
}

// submit sends items through the worker's own client with Failover, else
// to the next gateway.
func (w *submitter) submit(ctx context.Context, items []score) (int, error) {
	if w.sdk == nil {
		return w.c.submit(ctx, items)
	}
	_, err := w.sdk.Submit(ctx, w.c.board, toScores(items)...)
	return rwclient.Status(err)
}

// batch fills w.items with the next request's submissions.
func (w *submitter) batch() []score {
	w.items = w.items[:0]
	for range w.cfg.Batch {
		var m string
		if w.cfg.Members > 0 {
			m = "m" + strconv.Itoa(w.rng.IntN(w.cfg.Members))
		} else {
			m = w.prefix + strconv.Itoa(w.next)
			w.next++
		}
		w.items = append(w.items, score{Member: m, Score: float64(w.rng.IntN(1_000_000_000))})
	}
	return w.items
}

// progress prints count×per per second to w every second until stopped.
// The returned func stops it and waits for it.
func progress(ctx context.Context, w io.Writer, count *atomic.Int64, per int64, unit string) func() {
	if w == nil {
		return func() {}
	}
	last := int64(0)
	return everySecond(ctx, func(int) {
		n := count.Load()
		fmt.Fprintf(w, "  %d %s\n", (n-last)*per, unit)
		last = n
	})
}

// everySecond calls tick(1), tick(2), … once a second on a goroutine of
// its own until ctx ends or the returned func, which waits for it, is
// called.
func everySecond(ctx context.Context, tick func(i int)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for i := 1; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				tick(i)
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}
