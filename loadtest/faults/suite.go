package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"syscall"
	"time"
)

// Config is a suite run's shape.
type Config struct {
	Binary  string        // the gateway binary
	Nodes   int           // gateway processes (default 3)
	Writers int           // SDK writers (default 6)
	Pace    time.Duration // each writer's pause between submissions (default 20 ms)
	Warm    time.Duration // load before the fault (default 2 s)
	Hold    time.Duration // how long a fault lasts before it is healed (default 5 s)
	Settle  time.Duration // load after the heal (default 5 s)
	// Between is how long rolling-restart waits after a restarted node is
	// ready before it stops the next (default 0: at once, as an
	// orchestrator that waits for ready only).
	Between time.Duration
	Netns   bool // every node in its own network namespace (root; needed by the partitions)
	Log     *slog.Logger
}

func (c *Config) defaults() {
	c.Nodes = cmp(c.Nodes, 3)
	c.Writers = cmp(c.Writers, 6)
	c.Pace = cmp(c.Pace, 20*time.Millisecond)
	c.Warm = cmp(c.Warm, 2*time.Second)
	c.Hold = cmp(c.Hold, 5*time.Second)
	c.Settle = cmp(c.Settle, 5*time.Second)
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

func cmp[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// run is one fault injection's shared state: the exempt set tells the
// /readyz pollers which nodes a fault made unhealthy on purpose.
type run struct {
	cfg    Config
	c      *Cluster
	note   string // what the fault had to do beyond the plan
	mu     sync.Mutex
	exempt map[*Node]bool
	tl     *timeline // the nodes' stops and starts, for placing the write gaps
}

func (r *run) setExempt(n *Node, on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exempt[n] = on
}

func (r *run) counted(n *Node) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.exempt[n]
}

// Fault injects one fault and heals it: it returns when the cluster should
// recover on its own.
type Fault struct {
	Name   string
	Inject func(r *run, ctx context.Context) error
	Netns  bool // needs Config.Netns
	Tmpfs  bool // puts every node's data directory on a small tmpfs (root)
	Lazy   bool // puts every node's data directory on the lazy FUSE filesystem (root, /dev/fuse)
	// Nodes overrides Config.Nodes (zero: keep it); the writers are then at
	// least two per node, so that each node's writers fail over both ways.
	Nodes int
	// Spares is how many nodes are laid out beside Nodes to join later
	// (Cluster.Spares); Setup runs on the started cluster before the load
	// (nil: nothing), to shape it as the fault needs.
	Spares int
	Setup  func(r *run, ctx context.Context) error
}

// Faults are the suite's faults, by name.
var Faults = []Fault{
	{Name: "kill9-leader", Inject: func(r *run, ctx context.Context) error { return r.killRestart(ctx, true) }},
	{Name: "kill9-follower", Inject: func(r *run, ctx context.Context) error { return r.killRestart(ctx, false) }},
	{Name: "sigstop-leader", Inject: (*run).pauseLeader},
	{Name: "rolling-restart", Inject: (*run).rollingRestart},
	{Name: "corrupt-follower", Inject: (*run).corruptFollower},
	{Name: "disk-full-leader", Inject: (*run).diskFull, Tmpfs: true},
	{Name: "power-loss-all", Inject: (*run).powerLoss, Lazy: true},
	{Name: "partition-leader", Inject: func(r *run, ctx context.Context) error { return r.partition(ctx, isolateLeader) }, Netns: true},
	{Name: "partition-follower", Inject: func(r *run, ctx context.Context) error { return r.partition(ctx, isolateFollower) }, Netns: true},
	{Name: "partition-bridge", Inject: func(r *run, ctx context.Context) error { return r.partition(ctx, bridgeCut) }, Netns: true},
	{Name: "kill9-two", Inject: (*run).killTwo, Nodes: 5},
	{Name: "departed-removed", Setup: func(r *run, ctx context.Context) error { return r.departPeer(ctx, true) },
		Inject: (*run).killLeaderAfterDeparture, Spares: 1},
	{Name: "departed-not-removed", Setup: func(r *run, ctx context.Context) error { return r.departPeer(ctx, false) },
		Inject: (*run).killLeaderAfterDeparture, Spares: 1},
}

// FaultByName returns the named fault.
func FaultByName(name string) (Fault, bool) {
	i := slices.IndexFunc(Faults, func(f Fault) bool { return f.Name == name })
	if i < 0 {
		return Fault{}, false
	}
	return Faults[i], true
}

// target picks the leader or a follower and exempts it.
func (r *run) target(ctx context.Context, leader bool) (*Node, error) {
	l, err := r.c.Leader(ctx, 20*time.Second)
	if err != nil {
		return nil, err
	}
	n := l
	if !leader {
		n = r.c.Follower(l)
	}
	r.setExempt(n, true)
	r.cfg.Log.Info("fault target", "node", n.Name, "leader", l.Name)
	return n, nil
}

// restart starts n again and waits for it to be ready, then counts it.
func (r *run) restart(ctx context.Context, n *Node) error {
	if err := r.c.StartNode(n); err != nil {
		return err
	}
	r.tl.mark(n, "started")
	if err := r.c.WaitReady(ctx, n, 90*time.Second); err != nil {
		return err
	}
	r.tl.mark(n, "ready")
	r.setExempt(n, false)
	return nil
}

func (r *run) killRestart(ctx context.Context, leader bool) error {
	n, err := r.target(ctx, leader)
	if err != nil {
		return err
	}
	r.tl.mark(n, "SIGKILL")
	n.Stop(syscall.SIGKILL, 10*time.Second)
	sleep(ctx, r.cfg.Hold)
	return r.restart(ctx, n)
}

func (r *run) pauseLeader(ctx context.Context) error {
	n, err := r.target(ctx, true)
	if err != nil {
		return err
	}
	if err := n.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	sleep(ctx, r.cfg.Hold)
	if err := n.Signal(syscall.SIGCONT); err != nil {
		return err
	}
	if err := r.c.WaitReady(ctx, n, 60*time.Second); err != nil {
		return err
	}
	r.setExempt(n, false)
	return nil
}

// rollingRestart restarts every node in turn with SIGTERM, each ready
// (and Config.Between more) before the next stops.
func (r *run) rollingRestart(ctx context.Context) error {
	for _, n := range r.c.Nodes {
		r.setExempt(n, true)
		r.tl.mark(n, "SIGTERM")
		if err := n.Stop(syscall.SIGTERM, 60*time.Second); err != nil {
			r.cfg.Log.Warn("stop", "node", n.Name, "err", err)
		}
		r.tl.mark(n, "exited")
		if err := r.restart(ctx, n); err != nil {
			return err
		}
		sleep(ctx, r.cfg.Between)
	}
	return nil
}

// corruptFollower kills a follower, flips a byte in the middle of its
// largest data file and cuts the last 4 KiB off its second largest, then
// starts it again.
func (r *run) corruptFollower(ctx context.Context) error {
	n, err := r.target(ctx, false)
	if err != nil {
		return err
	}
	n.Stop(syscall.SIGKILL, 10*time.Second)
	files, err := largestFiles(n.Data)
	if err != nil {
		return err
	}
	if len(files) < 2 {
		return fmt.Errorf("faults: %s has %d data files, want 2", n.Name, len(files))
	}
	if err := flipByte(files[0].path, files[0].size/2); err != nil {
		return err
	}
	if err := os.Truncate(files[1].path, max(0, files[1].size-4096)); err != nil {
		return err
	}
	r.cfg.Log.Info("corrupted", "flipped", files[0].path, "truncated", files[1].path)
	sleep(ctx, r.cfg.Hold)
	return r.restart(ctx, n)
}

type sizedFile struct {
	path string
	size int64
}

// largestFiles lists the regular files under dir, largest first.
func largestFiles(dir string) ([]sizedFile, error) {
	var out []sizedFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, sizedFile{p, info.Size()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].size > out[j].size })
	return out, err
}

func flipByte(path string, at int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, at); err != nil {
		return err
	}
	b[0] ^= 0xff
	_, err = f.WriteAt(b, at)
	return err
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// Result is one run's outcome.
type Result struct {
	Fault      string
	Acked      int           // acknowledged submissions
	Unsure     int           // failed calls (applied or not)
	Lost       int           // acknowledged submissions missing from the settled board
	Twice      int           // submissions applied more often than acknowledged plus unresolved calls allow
	WriteGap   time.Duration // the longest write gap of any writer
	FaultGap   time.Duration // the longest that overlapped the fault's node events (gapDuring)
	WatchGap   time.Duration // the longest silence of any watcher
	NotReady   time.Duration // the time healthy nodes' /readyz did not say 200, summed
	Flaps      []Flap        // why: each healthy node's counted non-200 answers, by node and cause
	ReadyStale time.Duration // the time a node said ready while serving reads older than StaleBound, summed
	WorstAge   time.Duration // the oldest read a node served while it said ready
	Truth      ReadyTruth    // how long each node's /readyz disagreed with what it could do (truth.go)
	Violations []Violation
	Note       string         // what the fault had to do beyond its plan
	Timeline   []string       // the write gaps over 100 ms among the nodes' stops and starts (describeGaps)
	WriteErr   error          // the first error a writer's call returned, where one did
	WriteErrs  map[string]int // the writers' failed calls by kind (errKind)
	Agreed     string         // what every node served alike once settled: boards, rows, a hash (check)
	Err        error          // the run could not be carried out
	Chains     []Chain        // each watcher's chain (chain.go)
}

// RunOne runs fault once on a fresh cluster under dir.
func RunOne(ctx context.Context, cfg Config, f Fault, dir string) Result {
	cfg.defaults()
	if f.Nodes > 0 {
		cfg.Nodes, cfg.Writers = f.Nodes, max(cfg.Writers, 2*f.Nodes)
	}
	res := Result{Fault: f.Name}
	if f.Netns && !cfg.Netns {
		res.Err = fmt.Errorf("faults: %s needs Config.Netns", f.Name)
		return res
	}
	c, err := NewCluster(cfg.Binary, dir, cfg.Nodes, f.Spares, cfg.Netns, cfg.Log)
	if err != nil {
		res.Err = err
		return res
	}
	defer c.Close()
	r := &run{cfg: cfg, c: c, exempt: map[*Node]bool{}, tl: &timeline{}}
	if res.Err = r.prepare(ctx, f); res.Err != nil {
		return res
	}
	l, err := StartLoad(ctx, c, cfg.Writers, cfg.Pace, r.counted)
	if err != nil {
		res.Err = err
		return res
	}
	sleep(ctx, cfg.Warm)
	injErr := f.Inject(r, ctx)
	sleep(ctx, cfg.Settle)
	l.StopLoad() // every writer's call returned: nothing of theirs is retried any more
	set, settleErr := settle(ctx, clusterProbe(c), settleLimit)
	l.finishWatchers(ctx, &res, set, settleErr) // the watchers' chains, before tally reads their silence
	res.Err, res.Note = injErr, r.note
	l.tally(&res)
	l.tallyTruth(&res)
	events := r.tl.snapshot()
	res.Timeline = describeGaps(withElections(c, events), l.slowGaps(), l.stalls.stalls)
	res.FaultGap = l.gapDuring(events)
	if res.Acked == 0 {
		res.Violations = append(res.Violations, "no submission acknowledged at all")
	}
	if res.ReadyStale > 0 {
		res.Violations = append(res.Violations, Violation(fmt.Sprintf(
			"a node said ready for %v while serving reads older than %v (the oldest %v)",
			res.ReadyStale.Round(time.Millisecond), StaleBound, res.WorstAge.Round(time.Millisecond))))
	}
	check(l, &res, set, settleErr)
	return res
}

// prepare mounts the data directories the fault needs, starts the
// cluster and runs the fault's Setup.
func (r *run) prepare(ctx context.Context, f Fault) error {
	if f.Tmpfs {
		if err := r.c.mountData(); err != nil {
			return err
		}
	}
	if f.Lazy {
		if err := r.c.mountLazyData(); err != nil {
			return err
		}
	}
	if err := r.c.Start(ctx); err != nil {
		return err
	}
	if f.Setup != nil {
		return f.Setup(r, ctx)
	}
	return nil
}

// ErrFailed says a suite run found violations or could not run.
var ErrFailed = errors.New("faults: a run failed")

// tally adds the stopped load's counts and gaps to res.
func (l *Load) tally(res *Result) {
	for _, w := range l.writers {
		res.Acked += w.acked
		res.Unsure += w.unsure
		res.WriteGap = max(res.WriteGap, w.gap)
		for k, v := range w.errs {
			if res.WriteErrs == nil {
				res.WriteErrs = map[string]int{}
			}
			res.WriteErrs[k] += v
		}
		if res.WriteErr == nil && w.firstErr != nil {
			res.WriteErr = fmt.Errorf("%s: %w", w.member, w.firstErr)
		}
	}
	for _, w := range l.watchers {
		res.WatchGap = max(res.WatchGap, w.gap)
	}
	for _, p := range l.pollers {
		res.NotReady += p.notReady
		res.Flaps = append(res.Flaps, p.flaps...)
		res.ReadyStale += p.readyStale
		res.WorstAge = max(res.WorstAge, p.worstAge)
	}
}
