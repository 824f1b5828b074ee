package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os/exec"
	"strings"
	"time"
)

// FanoutConfig shapes a fan-out load: Subscribers WebSocket subscriptions,
// PerConn to a connection, spread over worker processes, and paced writers
// whose submissions carry their send time in the score (see scoreSlot), so
// that every subscription measures submit-to-receive latency of the rows
// it is pushed. The zero value of every field but Target has a default.
type FanoutConfig struct {
	Target Target // admin token; the board is created (policy latest) and preloaded
	// Redis, where set, is a redis-server host:port on loopback: the load
	// then runs against the Redis pub/sub peer (shared top-N only) instead
	// of the gateway.
	Redis string
	// Centrifugo, where set (with Redis), is a Centrifugo server's
	// host:port on loopback: the load then runs against "Redis + app +
	// Centrifugo" (fanout_centrifugo.go), the writers publishing the top N,
	// or each watcher's around view, or the rank lines and members views
	// (one of the three families a run), through its server API with
	// CentrifugoKey, the subscribers its WebSocket clients.
	Centrifugo, CentrifugoKey string
	// CentrifugoDelta has the Centrifugo peer use its delta option: the
	// subscribers ask for fossil deltas and the app publishes with
	// "delta": true (centrifugo_delta.go); the server's channels must allow
	// them (allowed_delta_types, with history and positioning).
	CentrifugoDelta bool
	// Subscribers is the number of subscriptions. Zero means none: a write
	// load only.
	Subscribers int
	// PerConn is the subscriptions per connection, 1 to 100 (the
	// protocol's limit), as on a lobby page that shows several live views:
	// subscription i of the plan is subscription i mod PerConn (id "v<j>")
	// of connection i ÷ PerConn, so there are ⌈Subscribers ÷ PerConn⌉
	// connections. Zero means 1: a connection per subscription, id "v".
	// The Redis peer takes 1 only; the Centrifugo peer more on top views
	// only, each subscription of a connection on a channel of its own to
	// which the app broadcasts the same top N (centrifugoLobby).
	PerConn int
	// Top, Around, Rank and MembersViews weigh the view kinds: subscription
	// i's kind follows them in rotation. All zero means every subscription
	// on the shared top-N.
	Top, Around, Rank, MembersViews int
	Limit                           int // top-N; zero means 10
	Radius                          int // around radius; zero means 5
	// BoardMembers is the board size, preloaded as m0 … m<n-1> in batches
	// of 1,000 where the board has fewer. Zero means 1,000.
	BoardMembers int
	// Rate is the writers' target submissions per second (zero: no writes,
	// an idle run), Shape how it varies, Batch the items per request (zero
	// means 100) and Writers the concurrent writers (zero means 8).
	Rate    float64
	Shape   Shape
	Batch   int
	Writers int
	// Stalled is the number of connections, beside the subscribers', that
	// subscribe and then never read, each with a 4 KiB receive buffer and
	// 1 KiB segments (see fanout_stalled.go): the gateway should close them
	// (4008) after its slow timeout at no cost to the others. Stalled connection k carries one subscription, to the
	// view of the plan's subscription k. They are spread over the workers
	// like the others and count against PerWorker, but not as subscribers.
	// Zero means none; at most Subscribers; the gateway only.
	Stalled int
	// Duration is the measured phase. Zero means 10 s.
	Duration time.Duration
	// PerWorker is the most connections one worker holds. Zero means
	// 9,000: with its own sockets a worker stays under 20,000 open files.
	PerWorker int
	// WorkerCommand returns the command of a worker process (one that runs
	// RunFanoutWorker on its stdin and stdout). Nil runs the workers in
	// this process, which suits tests and small loads.
	WorkerCommand func() *exec.Cmd
	// BurstWriterCommand, where set, starts the burst floor's writers
	// (burst.go) as processes even where WorkerCommand is nil: with the
	// subscribers in this process (so that the report can time receipts
	// from each acknowledgement), the floor's writer still has a process
	// and a scheduler of its own, as the gateway has. Nil: the writers run
	// as the subscriber workers do.
	BurstWriterCommand func() *exec.Cmd
	// ConnectTimeout bounds connecting the subscribers. Zero means 2 min.
	ConnectTimeout time.Duration
	// Drain is how long the subscribers keep reading after the writers
	// stop. Zero means 1 s.
	Drain time.Duration
	// CloseRate bounds how many connections a second the subscribers
	// close at the end, over all workers (each closes its share at an even
	// pace). Zero means all at once: on one machine with the servers, a
	// cluster's nodes then spend seconds on the close handshakes at once
	// and its Raft groups miss their heartbeats (docs/BENCHMARKS.md,
	// "100,000 WebSockets: the burst and the election").
	CloseRate int
	// Pprof is the gateway's --pprof address (host:port). Where set, the
	// memory figures are taken right after a garbage collection it asks
	// for, so that they count live memory. Empty means as found.
	Pprof string
	// PID is the server's process (gateway or redis-server) whose CPU and
	// RSS are read from /proc. Zero means not read.
	PID int
	// Nodes, where set, are a cluster's server processes: the server
	// figures are their sums (PID and Pprof are then not used) and the
	// report has each node's memory.
	Nodes []Node
	// BurstFloorAt, where positive (gateway only, with top-N watchers),
	// measures the burst floor (burst.go) in the same run: bare writers,
	// one per gateway holding top-N watchers, write one frame of
	// BurstFloorSize bytes (zero means 8: its time stamp) to as many
	// connections of the same workers as watch the top-N, BurstFloorAt
	// into the measured phase, and again every BurstFloorEvery after
	// where that is positive, while the measured phase lasts.
	BurstFloorAt    time.Duration
	BurstFloorEvery time.Duration
	BurstFloorSize  int
	// Progress receives a line per second. Nil means none.
	Progress io.Writer
}

func (c FanoutConfig) withDefaults() FanoutConfig {
	if c.Top+c.Around+c.Rank+c.MembersViews == 0 || c.Redis != "" && c.Centrifugo == "" {
		c.Top, c.Around, c.Rank, c.MembersViews = 1, 0, 0, 0
	}
	c.Limit = cmpOr(c.Limit, 10)
	c.Radius = cmpOr(c.Radius, 5)
	c.BoardMembers = cmpOr(c.BoardMembers, 1000)
	c.Shape = cmpOr(c.Shape, Steady)
	c.Batch = cmpOr(c.Batch, 100)
	c.Writers = cmpOr(c.Writers, 8)
	c.Duration = cmpOr(c.Duration, 10*time.Second)
	c.PerConn = cmpOr(c.PerConn, 1)
	c.PerWorker = cmpOr(c.PerWorker, 9000)
	c.ConnectTimeout = cmpOr(c.ConnectTimeout, 2*time.Minute)
	c.Drain = cmpOr(c.Drain, time.Second)
	return c
}

// Errors of RunFanout's config.
var (
	errPerConn       = fmt.Errorf("loadtest: subscriptions per connection not in 1…%d", maxPerConn)
	errPerConnRedis  = errors.New("loadtest: the Redis peer takes one subscription per connection")
	errPerConnAround = errors.New("loadtest: the Centrifugo peer takes several subscriptions per connection on top views only")
	errDeltaPeer     = errors.New("loadtest: the delta option is the Centrifugo peer's")
	errStalled       = errors.New("loadtest: stalled connections not in 0…subscribers")
	errStalledRedis  = errors.New("loadtest: stalled connections are for the gateway only, not the Redis peer")
)

// check refuses a config RunFanout cannot run; c has its defaults.
func (c FanoutConfig) check() error {
	switch {
	case c.PerConn < 1 || c.PerConn > maxPerConn:
		return fmt.Errorf("%w: %d", errPerConn, c.PerConn)
	case c.Redis != "" && c.Centrifugo == "" && c.PerConn != 1:
		return errPerConnRedis
	case c.Centrifugo != "" && c.PerConn != 1 && c.Around+c.Rank+c.MembersViews > 0:
		return errPerConnAround
	case c.CentrifugoDelta && c.Centrifugo == "":
		return errDeltaPeer
	case c.Stalled < 0 || c.Stalled > max(c.Subscribers, 0):
		return fmt.Errorf("%w: %d of %d", errStalled, c.Stalled, c.Subscribers)
	case c.Redis != "" && c.Stalled > 0:
		return errStalledRedis
	case c.Centrifugo != "" && c.Redis == "":
		return errCentrifugoRedis
	case c.Centrifugo != "" && centrifugoFamilies(c) > 1:
		return errCentrifugoViews
	case c.Centrifugo != "":
		return centrifugoAddr(c.Centrifugo)
	}
	return nil
}

// connections is the number of connections the subscriptions need.
func (c FanoutConfig) connections() int {
	return (c.Subscribers + c.PerConn - 1) / c.PerConn
}

func (c FanoutConfig) plan() viewPlan {
	return viewPlan{Top: c.Top, Around: c.Around, Rank: c.Rank, Members: c.MembersViews,
		Limit: c.Limit, Radius: c.Radius, BoardMembers: c.BoardMembers}
}

// workerConfigs splits the connections over workers of at most PerWorker,
// worker w dialling from 127.0.0.<w+2> where the target is IPv4 loopback,
// so that every worker has a source address's ephemeral ports to itself.
// A worker's subscriptions start at a connection's first. The stalled
// connections count against PerWorker and are spread in proportion: of
// the regular and stalled connections together, worker w holds
// [w·T÷n, (w+1)·T÷n), and of the first m of those, m·conns÷T (rounded
// down) are regular. Without stalled connections that is the regular
// split, [w·conns÷n, (w+1)·conns÷n).
func (c FanoutConfig) workerConfigs() ([]workerConfig, error) {
	base := workerConfig{Mode: "ws", Token: c.Target.Token, Board: c.Target.Board, Plan: c.plan(), PerConn: c.PerConn,
		Dials: 64, Reconnects: 3, Hard: c.ConnectTimeout + c.Duration + c.Drain + time.Minute}
	host := c.Redis
	if c.Redis != "" {
		base.Mode, base.URL = "redis", c.Redis
		if c.Centrifugo != "" {
			base.Mode, base.URL, host = "centrifugo", c.Centrifugo, c.Centrifugo
			base.Delta = c.CentrifugoDelta
		}
	} else {
		bases, err := c.Target.baseURLs()
		if err != nil {
			return nil, err
		}
		for _, b := range bases {
			u, err := url.Parse(b)
			if err != nil {
				return nil, err
			}
			host = u.Host // the source address family follows the gateways'; they share one
		}
		base.URL = strings.Join(bases, ",")
	}
	h, _, _ := net.SplitHostPort(host)
	v4 := net.ParseIP(h).To4() != nil
	conns := c.connections()
	total := conns + c.Stalled
	n := (total + c.PerWorker - 1) / c.PerWorker
	var out []workerConfig
	for w := range n {
		wc := base
		m0, m1 := w*total/n, (w+1)*total/n
		r0, r1 := m0*conns/total, m1*conns/total // regular connections
		wc.From = min(r0*c.PerConn, c.Subscribers)
		wc.To = min(r1*c.PerConn, c.Subscribers)
		wc.StalledFrom, wc.StalledTo = m0-r0, m1-r1
		if v4 && w+2 < 255 {
			wc.SrcIP = fmt.Sprintf("127.0.0.%d", w+2)
		}
		out = append(out, wc)
	}
	if c.CloseRate > 0 {
		for i := range out {
			out[i].CloseEvery = time.Second * time.Duration(len(out)) / time.Duration(c.CloseRate)
		}
	}
	return out, nil
}

// RunFanout preloads the board, connects the subscribers, runs the
// writers for cfg.Duration, lets the subscribers drain, stops everything
// and reports. Every process and goroutine it starts has ended when it
// returns.
func RunFanout(ctx context.Context, cfg FanoutConfig) (FanoutReport, error) {
	cfg = cfg.withDefaults()
	rep := FanoutReport{Peer: "rankwire", Subscribers: cfg.Subscribers, Connections: cfg.connections(), PerConnection: cfg.PerConn,
		Mix: cfg.mix(), BoardMembers: cfg.BoardMembers, Rate: cfg.Rate, Shape: cfg.Shape, Batch: cfg.Batch}
	if cfg.Stalled > 0 {
		rep.Stalled = &StalledStats{Connections: cfg.Stalled}
	}
	if err := cfg.check(); err != nil {
		return rep, err
	}
	RaiseFileLimit()
	sk, err := cfg.prepare(ctx, &rep)
	if err != nil {
		return rep, err
	}
	mIdle := cfg.scrape(ctx)
	idle, idleNodes := cfg.sampleNodes()
	wcs, err := cfg.workerConfigs()
	if err != nil {
		return rep, err
	}
	rep.Workers = len(wcs)
	var bf *burstFloor
	if cfg.BurstFloorAt > 0 && cfg.Redis == "" {
		if bf, err = startBurstFloor(ctx, cfg, wcs, len(strings.Split(wcs[0].URL, ","))); err != nil {
			return rep, err
		}
		if bf != nil {
			defer bf.pool.stop()
		}
	}
	if cfg.WorkerCommand == nil { // the subscribers share the writers' process: the book can pair them
		acks.enable()
		defer acks.disable()
	}
	ws := startWorkers(ctx, cfg, wcs)
	defer ws.stop()
	t0 := time.Now()
	connected := ws.waitConnected(ctx, cfg.Subscribers, cfg.Stalled, cfg.ConnectTimeout, cfg.Progress)
	rep.ConnectSeconds = time.Since(t0).Seconds()
	sleep(ctx, 2*time.Second) // let the snapshots go out and the heap settle
	am := cfg.scrape(ctx)
	aProc, connNodes := cfg.sampleNodes()
	a := fanoutSample{proc: aProc, m: am, c: ws.sum(), self: selfCPU()}
	rep.Connected, rep.ConnectionsConnected = int(a.c.Connected), int(a.c.Connections)
	if rep.Stalled != nil {
		rep.Stalled.Connected = int(a.c.Stalled)
	}
	// The server holds the stalled connections too: its memory is theirs as well.
	rep.memory(idle, a.proc, mIdle, a.m, int(connected.Connections+connected.Stalled))
	wst := &writeStats{rec: newRecorder(1_000_000)}
	stopProgress := fanoutProgress(ctx, cfg.Progress, ws, wst, cfg.PID)
	stopBurst := bf.schedule(ctx, cfg.BurstFloorAt, cfg.BurstFloorEvery)
	if cfg.Rate > 0 {
		runWriters(ctx, sk, cfg.Shape, cfg.Rate, cfg.Batch, cfg.Writers, cfg.BoardMembers, cfg.Duration, wst)
	} else {
		sleep(ctx, cfg.Duration)
	}
	writeElapsed := time.Since(a.at())
	sleep(ctx, cfg.Drain)
	stopBurst()
	stopProgress()
	bProc, endNodes := cfg.sampleNodes() // before scrape's collection: RSS as found
	b := fanoutSample{proc: bProc, m: cfg.scrape(ctx), c: ws.sum(), self: selfCPU()}
	finals := ws.stop() // the stalled connections' closes are checked now
	rep.measured(a, b, writeElapsed, wst, finals)
	if bf != nil {
		rep.BurstFloor = bf.stats(a.at(), finals)
		rep.BurstFloor.TopFirst = rep.topFirst // final's merge: the top view's histogram merged once
	}
	rep.Nodes = nodeMemory(cfg.Nodes, idleNodes, connNodes, endNodes)
	rep.Stalled.final(mIdle, b.m, finals)
	return rep, ctx.Err()
}

// prepare creates and preloads the board (or the Redis sorted set) and
// returns the writers' sink.
func (cfg FanoutConfig) prepare(ctx context.Context, rep *FanoutReport) (sink, error) {
	t0 := time.Now()
	if cfg.Redis != "" {
		rep.Peer = "redis"
		if err := checkLoopback("http://" + cfg.Redis); err != nil {
			return nil, err
		}
		rc := newRedis(cfg.Redis, "", cfg.Writers+4)
		context.AfterFunc(ctx, func() { rc.Close() })
		rs := &redisSink{rc: rc, key: "rwload:" + cfg.Target.Board, channel: redisChannel(cfg.Target.Board), limit: cfg.Limit}
		if cfg.Centrifugo != "" {
			rep.Peer = "centrifugo"
			p := newCentrifugoPublisher(cfg.Centrifugo, cfg.CentrifugoKey, rs.channel, cfg.Writers+4)
			p.lobby, p.delta = centrifugoLobby(cfg.Target.Board, cfg.PerConn), cfg.CentrifugoDelta
			rs.publish = p.publish
			if cfg.Around > 0 {
				rs.around = newAroundApp(rc, rs.key, cfg.Target.Board, cfg.plan(), cfg.Subscribers, p.publishBatch)
			}
			if cfg.Rank+cfg.MembersViews > 0 {
				rs.views = newViewsApp(rc, rs.key, cfg.Target.Board, cfg.plan(), cfg.Subscribers, p.publishBatch)
			}
		}
		err := rs.preload(ctx, cfg.BoardMembers)
		rep.PreloadSeconds = time.Since(t0).Seconds()
		return rs, err
	}
	c, err := newClient(cfg.Target, cfg.Writers+4)
	if err != nil {
		return nil, err
	}
	_, err = preload(ctx, c, cfg.BoardMembers, slotScore)
	rep.PreloadSeconds = time.Since(t0).Seconds()
	return gatewaySink{c}, err
}

func (cfg FanoutConfig) scrape(ctx context.Context) metrics {
	if cfg.Redis != "" {
		return nil
	}
	cfg.collectAll(ctx)
	return scrapeMetrics(ctx, cfg.Target.Metrics)
}

func (cfg FanoutConfig) mix() string {
	var parts []string
	for i, w := range []int{cfg.Top, cfg.Around, cfg.Rank, cfg.MembersViews} {
		if w > 0 {
			parts = append(parts, fmt.Sprintf("%s:%d", viewKinds[i], w))
		}
	}
	return strings.Join(parts, ",")
}

func procOr(pid int) procSample {
	s, ok := readProc(pid)
	if !ok {
		s.At = time.Now()
	}
	return s
}

// fanoutSample is the state at one end of the measured phase.
type fanoutSample struct {
	proc procSample
	m    metrics
	c    workerReport  // summed over workers
	self time.Duration // the coordinator's CPU
}

func (s fanoutSample) at() time.Time { return s.proc.At }
