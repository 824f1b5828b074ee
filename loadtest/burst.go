package loadtest

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The burst floor (docs/BENCHMARKS.md, "Reach: the top view's burst
// against its floor"): the least time this machine needs, in the same run,
// to fan one message out to as many sockets as watch the shared top-N.
// One bare writer process per gateway (a fan-out worker in mode
// "burst-writer") accepts as many loopback connections as that gateway
// holds of top-N watchers, from the same subscriber workers and in the
// same spread; at the coordinator's word it writes one frame of Size
// bytes to each with a plain write(2), from GOMAXPROCS goroutines, the
// frame carrying the time the burst began; each worker reads its burst
// connections with a bare read and records the latency from that time.
// Nothing of the gateway (encoding, the writer pool, WebSocket framing on
// either side) is in it: the gap between the top view's latency and this
// is what those, and the gateway's scheduling, cost.

// burstFrameMin is the least frame: the 8-byte time stamp.
const burstFrameMin = 8

// BurstFloorStats is the burst floor's part of a fan-out report.
type BurstFloorStats struct {
	Sockets int     `json:"sockets"`    // connections written to: the top-N watchers' count
	Writers int     `json:"writers"`    // writer processes, one per gateway holding top-N watchers
	Size    int     `json:"size"`       // bytes a frame
	At      float64 `json:"at_seconds"` // when the first burst began, in seconds of the measured phase
	Bursts  int     `json:"bursts"`     // bursts fired
	// WriteSeconds is the slowest writer's time from a burst's start
	// to its last write returning; WriterCPU the writers' CPU over all
	// bursts.
	WriteSeconds float64       `json:"write_seconds"`
	WriterCPU    time.Duration `json:"writer_cpu"`
	// Latency is from the burst's start to each frame's receipt.
	Latency Latency `json:"latency"`
	// TopFirst is the least top-N latency seen (to the histogram's 2 %):
	// where the top view changed once in the measured phase, the top
	// view's p99 less this is its burst's own spread, the part the floor
	// compares with (the rest is the submission's round trip and the push's wait).
	TopFirst time.Duration `json:"top_first"`
}

// burstWriter is a worker in mode "burst-writer": it listens on loopback,
// reports its address, accepts cfg.BurstConns connections, and writes one
// frame of cfg.BurstSize bytes to each for every line read from in; in's
// end stops it. Its reports carry BurstAddr, BurstAccepted and, after a
// burst, BurstWrite (the longest burst's) and BurstCPU (all bursts').
func runBurstWriter(ctx context.Context, cfg workerConfig, in *bufio.Reader, enc *json.Encoder) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("loadtest: burst writer: %w", err)
	}
	var (
		mu       sync.Mutex // guards conns and rep
		conns    []net.Conn
		rep      = workerReport{BurstAddr: ln.Addr().String()}
		accepter sync.WaitGroup
	)
	defer func() {
		// The listener first, and its accept loop awaited: a connection
		// accepted after the closes below would be left open.
		ln.Close()
		accepter.Wait()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	report := func(final bool) error {
		mu.Lock()
		defer mu.Unlock()
		rep.Final, rep.BurstAccepted = final, int64(len(conns))
		return enc.Encode(rep)
	}
	report(false)
	want := 0
	for _, n := range cfg.BurstConns {
		want += n
	}
	accepter.Go(func() { // ends at ln.Close
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			all := len(conns) == want
			mu.Unlock()
			if all { // the coordinator waits for this to fire: at once, not at the next tick
				report(false)
			}
		}
	})
	lines := make(chan struct{})
	// The reader of in ends at in's end, or at its next line once ctx
	// ended: it cannot be awaited (a read of in does not end with ctx),
	// but it never blocks on a loop that returned.
	go func() {
		defer close(lines)
		for {
			if _, err := in.ReadBytes('\n'); err != nil {
				return
			}
			select {
			case lines <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}()
	tick := time.NewTicker(cmpOr(cfg.ReportEvery, 250*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return report(true)
		case <-tick.C:
			report(false)
		case _, ok := <-lines:
			if !ok {
				return report(true)
			}
			mu.Lock()
			cs := conns
			mu.Unlock()
			cpu0 := selfCPU()
			took := writeBurst(cs, max(cfg.BurstSize, burstFrameMin))
			mu.Lock()
			rep.BurstWrite, rep.BurstCPU = max(rep.BurstWrite, took), rep.BurstCPU+selfCPU()-cpu0
			mu.Unlock()
			report(false)
		}
	}
}

// writeBurst writes one frame of size bytes, stamped with the time now,
// to every connection of cs, in order, split into GOMAXPROCS contiguous
// parts written at once; it returns when every write has returned, with
// the time that took.
func writeBurst(cs []net.Conn, size int) time.Duration {
	frame := make([]byte, size)
	t0 := time.Now()
	binary.LittleEndian.PutUint64(frame, uint64(t0.UnixNano()))
	n := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for p := range n {
		part := cs[p*len(cs)/n : (p+1)*len(cs)/n]
		wg.Go(func() {
			for _, c := range part {
				c.Write(frame) // a closed peer's error is its frame not counted
			}
		})
	}
	wg.Wait()
	return time.Since(t0)
}

// runBurstReaders dials cfg.BurstConns[k] connections to cfg.BurstAddrs[k]
// for each writer k, from cfg.SrcIP, and reads each one's frames until ctx
// ends, recording each frame's latency from its stamp in stats.burst.
// Dial errors count as "burst dial".
func runBurstReaders(ctx context.Context, cfg workerConfig, stats *wsStats, wg *sync.WaitGroup) {
	d := &net.Dialer{Timeout: 30 * time.Second}
	if cfg.SrcIP != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(cfg.SrcIP)}
	}
	size := max(cfg.BurstSize, burstFrameMin)
	for k, addr := range cfg.BurstAddrs {
		for range cfg.BurstConns[k] {
			c, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				stats.count(stats.errors, "burst dial: "+shortErr(err))
				continue
			}
			stats.burstConns.Add(1)
			context.AfterFunc(ctx, func() { c.Close() })
			wg.Go(func() { readBurst(c, size, stats) })
		}
	}
}

// readBurst reads size-byte frames from c until it fails.
func readBurst(c net.Conn, size int, stats *wsStats) {
	defer c.Close()
	buf := make([]byte, size)
	for {
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		at := time.Unix(0, int64(binary.LittleEndian.Uint64(buf)))
		stats.burst.Add(time.Since(at))
	}
}

// burstPlan is where the burst floor's connections go: per worker, how
// many to each writer, so that writer k gets the top-N watchers gateway
// k holds and each worker as many as it holds of them. writers lists the
// gateways (their index in the base URLs) that hold any.
func burstPlan(wcs []workerConfig, plan viewPlan, perConn, gateways int) (perWorker [][]int, writers []int) {
	total := make([]int, gateways)
	perWorker = make([][]int, len(wcs))
	k := max(perConn, 1)
	for w, wc := range wcs {
		perWorker[w] = make([]int, gateways)
		for from := wc.From; from < wc.To; from += k {
			for i := from; i < min(from+k, wc.To); i++ {
				if _, kind := plan.view(i); kind == 0 {
					g := from / k % gateways // the connection's gateway, as runSubscribers picks it
					perWorker[w][g]++
					total[g]++
				}
			}
		}
	}
	for g, n := range total {
		if n > 0 {
			writers = append(writers, g)
		}
	}
	return perWorker, writers
}

// burstFloor is the coordinator's side: the writer workers and what the
// subscriber workers need of them.
type burstFloor struct {
	pool    *workerPool
	writers []int // gateway index of each writer
	sockets int
	size    int
	started atomic.Int64 // UnixNano of the first word to write; 0 before
	fired   atomic.Int64 // bursts fired
}

// startBurstFloor starts the writers (one per gateway holding top-N
// watchers), waits for their addresses and fills in each subscriber
// worker's BurstAddrs and BurstConns. Nil where there is nothing to
// write to.
func startBurstFloor(ctx context.Context, cfg FanoutConfig, wcs []workerConfig, gateways int) (*burstFloor, error) {
	perWorker, writers := burstPlan(wcs, cfg.plan(), cfg.PerConn, gateways)
	if len(writers) == 0 {
		return nil, nil
	}
	bf := &burstFloor{writers: writers, size: cfg.BurstFloorSize}
	wrs := make([]workerConfig, len(writers))
	for j, g := range writers {
		n := 0
		for w := range wcs {
			n += perWorker[w][g]
		}
		wrs[j] = workerConfig{Mode: "burst-writer", BurstConns: []int{n}, BurstSize: bf.size, Hard: wcs[0].Hard}
		bf.sockets += n
	}
	bf.pool = startWorkers(ctx, cfg.burstWriters(), wrs)
	addrs := make([]string, len(writers))
	bf.pool.awaitReports(ctx, time.Minute, func() bool {
		return !slices.ContainsFunc(bf.pool.workers, func(w *worker) bool { return w.latest().BurstAddr == "" })
	})
	for j, w := range bf.pool.workers {
		if addrs[j] = w.latest().BurstAddr; addrs[j] == "" {
			bf.pool.stop()
			return nil, fmt.Errorf("loadtest: burst writer %d gave no address", j)
		}
	}
	for w := range wcs {
		wcs[w].BurstAddrs, wcs[w].BurstSize = addrs, bf.size
		for _, g := range writers {
			wcs[w].BurstConns = append(wcs[w].BurstConns, perWorker[w][g])
		}
	}
	return bf, nil
}

// burstWriters is c as the burst floor's writers start: in processes of
// their own where BurstWriterCommand is set.
func (c FanoutConfig) burstWriters() FanoutConfig {
	if c.BurstWriterCommand != nil {
		c.WorkerCommand = c.BurstWriterCommand
	}
	return c
}

// fire tells every writer to write its burst, as nearly at once as the
// pipes allow, after waiting until every connection is accepted (at most
// 10 s; a writer reports at once when it has accepted all of its). Not
// safe for concurrent use.
func (bf *burstFloor) fire(ctx context.Context) {
	bf.pool.awaitReports(ctx, 10*time.Second, func() bool {
		var n int64
		for _, w := range bf.pool.workers {
			n += w.latest().BurstAccepted
		}
		return n >= int64(bf.sockets)
	})
	bf.started.CompareAndSwap(0, time.Now().UnixNano())
	bf.fired.Add(1)
	for _, w := range bf.pool.workers {
		w.stdin.Write([]byte("go\n"))
	}
}

// stats stops the writers and summarises the burst; measuredAt is the
// measured phase's start, finals the subscriber workers' final reports.
func (bf *burstFloor) stats(measuredAt time.Time, finals []workerReport) *BurstFloorStats {
	s := &BurstFloorStats{Sockets: bf.sockets, Writers: len(bf.writers), Size: max(bf.size, burstFrameMin), Bursts: int(bf.fired.Load())}
	if at := bf.started.Load(); at > 0 {
		s.At = time.Unix(0, at).Sub(measuredAt).Seconds()
	}
	for _, f := range bf.pool.stop() {
		s.WriteSeconds = max(s.WriteSeconds, f.BurstWrite.Seconds())
		s.WriterCPU += f.BurstCPU
	}
	h := newHist()
	for _, f := range finals {
		if f.BurstHist != nil {
			h.merge(*f.BurstHist)
		}
	}
	s.Latency = h.Latency()
	return s
}

// awaitReports waits until done, asked at once and again after each
// progress report of p's workers, holds, within ctx and timeout; it
// reports whether it held. One waiter at a time: the reports' token
// (workerPool.updated) wakes one.
func (p *workerPool) awaitReports(ctx context.Context, timeout time.Duration, done func() bool) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for !done() {
		select {
		case <-p.updated:
		case <-ctx.Done():
			return false
		case <-t.C:
			return done()
		}
	}
	return true
}

// latest is w's latest progress report.
func (w *worker) latest() workerReport {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// first is the least duration h holds, to its bucket's lower bound; 0
// where empty.
func (h *Hist) first() time.Duration {
	for i := range h.Counts {
		if h.Counts[i].Load() > 0 {
			if i == 0 {
				return 0
			}
			return time.Duration(bucketUpper(i-1) * float64(time.Microsecond))
		}
	}
	return 0
}

// schedule fires the burst after at, and again every every after that
// where every is positive, until ctx ends or stop is called, in a
// goroutine the returned stop waits for. On a nil bf it does nothing.
func (bf *burstFloor) schedule(ctx context.Context, at, every time.Duration) (stop func()) {
	if bf == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for wait := at; ; wait = every {
			if sleep(ctx, wait); ctx.Err() != nil {
				return
			}
			bf.fire(ctx)
			if every <= 0 {
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

// String is the burst floor's lines of the report, beside top, the top-N
// view's latency: the floor's own, and the top view's p99 and its
// spread (p99 less the first) against the floor's p99.
func (s BurstFloorStats) String(top Latency) string {
	var b strings.Builder
	l := s.Latency
	fmt.Fprintf(&b, "  burst floor: %d sockets over %d bare writers, %d B a frame, %d bursts from %.1f s: written in at most %v (%v CPU in all), received %d\n",
		s.Sockets, s.Writers, s.Size, s.Bursts, s.At, round(time.Duration(s.WriteSeconds*float64(time.Second))), round(s.WriterCPU), l.Count)
	fmt.Fprintf(&b, "  burst-to-receive   %-8s %8d %8v %8v %8v %8v\n", "floor", l.Count, round(l.P50), round(l.P90), round(l.P99), round(l.Max))
	if top.Count > 0 && l.P99 > 0 {
		spread := top.P99 - s.TopFirst
		fmt.Fprintf(&b, "  top p99 %v = %.2f× the floor's p99; its burst's spread (p99 %v less the first %v) %v = %.2f×\n",
			round(top.P99), top.P99.Seconds()/l.P99.Seconds(), round(top.P99), round(s.TopFirst), round(spread), spread.Seconds()/l.P99.Seconds())
	}
	return b.String()
}
