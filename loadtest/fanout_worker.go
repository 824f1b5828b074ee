package loadtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	rwclient "github.com/rankwire/rankwire/client"
)

// workerConfig is what the coordinator sends a subscriber worker, as one
// JSON line on its stdin. The worker then runs until its stdin ends (the
// coordinator's stop) or Hard passes, whichever is first.
type workerConfig struct {
	Mode        string        `json:"mode"` // "ws" (the gateway), "redis" or "centrifugo" (the peers)
	URL         string        `json:"url"`  // http://host:port of the gateway (several, comma-separated: connections take them in turn), or redis host:port
	Token       string        `json:"token"`
	Board       string        `json:"board"`
	Plan        viewPlan      `json:"plan"`
	From        int           `json:"from"` // subscriptions [From, To) of the plan; From a multiple of PerConn
	To          int           `json:"to"`
	StalledFrom int           `json:"stalled_from,omitempty"` // stalled connections [StalledFrom, StalledTo)
	StalledTo   int           `json:"stalled_to,omitempty"`
	PerConn     int           `json:"per_conn"`        // subscriptions per connection; zero means 1
	Delta       bool          `json:"delta,omitempty"` // centrifugo: subscribe asking for fossil deltas
	SrcIP       string        `json:"src_ip"`          // source address; empty: the default
	Dials       int           `json:"dials"`           // concurrent dials
	Reconnects  int           `json:"reconnects"`
	Hard        time.Duration `json:"hard"`
	ReportEvery time.Duration `json:"report_every"`
	CloseEvery  time.Duration `json:"close_every,omitempty"` // at the stop, one connection closed each CloseEvery; zero: all at once

	// The burst floor (burst.go): a subscriber worker dials BurstConns[k]
	// bare connections to the writer at BurstAddrs[k]; a writer ("burst-writer"
	// mode) expects BurstConns[0]. Frames are BurstSize bytes.
	BurstAddrs []string `json:"burst_addrs,omitempty"`
	BurstConns []int    `json:"burst_conns,omitempty"`
	BurstSize  int      `json:"burst_size,omitempty"`
}

// workerReport is one JSON line a worker writes on its stdout: counters
// so far, every ReportEvery, and a final one with the histograms.
type workerReport struct {
	Final       bool             `json:"final,omitempty"`
	Connected   int64            `json:"connected"`   // subscriptions on open connections
	Connections int64            `json:"connections"` // open connections
	Messages    int64            `json:"messages"`
	Bytes       int64            `json:"bytes"`
	Wire        int64            `json:"wire,omitempty"`        // the frames carrying them, with their headers
	Deltas      int64            `json:"deltas,omitempty"`      // of the messages, Centrifugo's fossil deltas
	DeltaBytes  int64            `json:"delta_bytes,omitempty"` // their bytes
	Gaps        int64            `json:"gaps"`
	Reconnects  int64            `json:"reconnects"`
	DialErrors  int64            `json:"dial_errors"`
	Failed      int64            `json:"failed"` // subscriptions whose connection gave up
	Viewed      int64            `json:"viewed"` // subscriptions that received their view (a first snapshot)
	CPU         time.Duration    `json:"cpu"`    // the worker's own user+system CPU so far
	Errors      map[string]int64 `json:"errors,omitempty"`
	ByNode      map[string]int64 `json:"errors_by_node,omitempty"` // "<host:port> <error>"
	Closes      map[string]int64 `json:"closes,omitempty"`
	Hists       []histWire       `json:"hists,omitempty"` // by viewKinds index
	Err         string           `json:"err,omitempty"`

	// Of the messages, the gateway's heartbeats, their bytes and their
	// frames' bytes.
	Heartbeats     int64 `json:"heartbeats,omitempty"`
	HeartbeatBytes int64 `json:"heartbeat_bytes,omitempty"`
	HeartbeatWire  int64 `json:"heartbeat_wire,omitempty"`

	// The stalled connections: opened so far (a close is not seen until
	// the end), given up, and in the final report those found closed by
	// the server and those still open.
	Stalled       int64 `json:"stalled,omitempty"`
	StalledFailed int64 `json:"stalled_failed,omitempty"`
	StalledClosed int64 `json:"stalled_closed,omitempty"`
	StalledOpen   int64 `json:"stalled_open,omitempty"`

	// The burst floor: a subscriber worker's open burst connections and,
	// in its final report, their latencies; a writer's address, the
	// connections it accepted, its last burst's time and CPU.
	BurstConns    int64         `json:"burst_conns,omitempty"`
	BurstHist     *histWire     `json:"burst_hist,omitempty"`
	BurstAddr     string        `json:"burst_addr,omitempty"`
	BurstAccepted int64         `json:"burst_accepted,omitempty"`
	BurstWrite    time.Duration `json:"burst_write,omitempty"`
	BurstCPU      time.Duration `json:"burst_cpu,omitempty"`
}

func (s *wsStats) report(final bool) workerReport {
	r := workerReport{Final: final, Connected: s.connected.Load(), Connections: s.connections.Load(), Gaps: s.gaps.Load(), Reconnects: s.reconnects.Load(),
		DialErrors: s.dialErrors.Load(), Failed: s.failed.Load(), Viewed: s.viewed.Load(), CPU: selfCPU(), Stalled: s.stalled.Load(), StalledFailed: s.stalledFailed.Load(),
		BurstConns: s.burstConns.Load()}
	r.Messages, r.Bytes = s.totals()
	r.Wire, r.Deltas, r.DeltaBytes = s.wireBytes()
	r.Heartbeats, r.HeartbeatBytes, r.HeartbeatWire = s.heartbeatTotals()
	if final {
		r.StalledClosed, r.StalledOpen = s.stalledClosed.Load(), s.stalledOpen.Load()
		s.mu.Lock()
		r.Errors, r.Closes, r.ByNode = s.errors, s.closes, s.byNode
		s.mu.Unlock()
		r.Hists = s.hists()
		if r.BurstConns > 0 {
			bw := s.burst.wire()
			r.BurstHist = &bw
		}
	}
	return r
}

// RaiseFileLimit raises this process's RLIMIT_NOFILE soft limit to its
// hard limit and returns the new limit: a worker holds thousands of sockets.
func RaiseFileLimit() (uint64, error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, err
	}
	l.Cur = l.Max
	return l.Cur, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
}

// RunFanoutWorker is a subscriber worker's main: it reads its workerConfig
// from in, runs its subscribers, writes workerReport lines to out and
// returns when in ends, ctx ends or the config's hard limit passes. rwload
// runs it as `rwload fanout-worker`; RunFanout starts those, or runs it in
// process.
func RunFanoutWorker(ctx context.Context, in io.Reader, out io.Writer) error {
	RaiseFileLimit()
	br := bufio.NewReader(in)
	line, err := br.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("loadtest: worker config: %w", err)
	}
	var cfg workerConfig
	if err := json.Unmarshal(line, &cfg); err != nil {
		return fmt.Errorf("loadtest: worker config: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, cmpOr(cfg.Hard, 10*time.Minute))
	defer cancel()
	if cfg.Mode == "burst-writer" {
		return runBurstWriter(ctx, cfg, br, json.NewEncoder(out))
	}
	go func() { io.Copy(io.Discard, br); cancel() }() // stdin's end is the stop
	stats := newWSStats()
	enc := json.NewEncoder(out)
	var wg sync.WaitGroup
	wg.Go(func() { reportLoop(ctx, enc, stats, cmpOr(cfg.ReportEvery, 250*time.Millisecond)) })
	err = runSubscribers(ctx, cfg, stats)
	cancel()
	wg.Wait()
	rep := stats.report(true)
	if err != nil {
		rep.Err = err.Error()
	}
	return enc.Encode(rep)
}

func reportLoop(ctx context.Context, enc *json.Encoder, stats *wsStats, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if enc.Encode(stats.report(false)) != nil {
				return
			}
		}
	}
}

// runSubscribers runs subscriptions [cfg.From, cfg.To) until ctx ends,
// cfg.PerConn to a connection: subscription i of the plan is subscription
// i mod PerConn of connection i ÷ PerConn; and beside them the stalled
// connections [cfg.StalledFrom, cfg.StalledTo), which never read.
func runSubscribers(ctx context.Context, cfg workerConfig, stats *wsStats) error {
	sem := make(chan struct{}, cmpOr(cfg.Dials, 64))
	var wg sync.WaitGroup
	defer wg.Wait()
	switch cfg.Mode {
	case "redis":
		return runRedisSubscribers(ctx, cfg, stats, sem, &wg)
	case "centrifugo":
		return runCentrifugoSubscribers(ctx, cfg, stats, sem, &wg)
	}
	bases := strings.Split(cfg.URL, ",") // the gateways' base URLs
	for _, b := range bases {
		if err := checkLoopback(b); err != nil {
			return err
		}
	}
	runBurstReaders(ctx, cfg, stats, &wg)
	client := sourceClient(cfg.SrcIP)
	sdk, err := rwclient.New(bases, rwclient.WithToken(cfg.Token), rwclient.WithHTTPClient(client))
	if err != nil {
		return fmt.Errorf("loadtest: %w", err)
	}
	k := max(cfg.PerConn, 1)
	pace := &closePacer{every: cfg.CloseEvery}
	for from := cfg.From; from < cfg.To; from += k {
		base := bases[from/k%len(bases)] // connection from/k, on the gateways in turn
		c := &wsConn{sdk: sdk, base: base, board: cfg.Board, client: client, stats: stats, shard: from / k % statShards, maxConn: cfg.Reconnects, pace: pace}
		for i := from; i < min(from+k, cfg.To); i++ {
			v, kind := cfg.Plan.view(i)
			c.subs = append(c.subs, wsSub{id: subID(i-from, k), view: v, kind: kind})
		}
		wg.Go(func() { c.run(ctx, sem) })
	}
	// The stalled ones on the first gateway, dialled raw: they need sockets
	// of their own making (tiny receive windows).
	stalled := "ws" + strings.TrimPrefix(bases[0], "http") + "/v1/ws?access_token=" + url.QueryEscape(cfg.Token)
	runStalled(ctx, cfg, stalled, stats, sem, &wg)
	return nil
}

// selfCPU is this process's user and system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// closePacer spaces the connections' closes at the stop: each wait returns
// every after the one before (the first at once). Safe for concurrent use;
// the zero value, or every 0, never waits.
type closePacer struct {
	every time.Duration
	mu    sync.Mutex // guards next
	next  time.Time
}

// wait blocks until this caller's turn to close.
func (p *closePacer) wait() {
	if p == nil || p.every <= 0 {
		return
	}
	p.mu.Lock()
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	at := p.next
	p.next = p.next.Add(p.every)
	p.mu.Unlock()
	time.Sleep(time.Until(at))
}
