package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/rankwire/rankwire/loadtest"
)

func fanout(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("fanout", flag.ExitOnError)
	var t target
	t.register(fs, "fanout")
	var c loadtest.FanoutConfig
	nodes := serverFlags(fs, &c)
	fs.IntVar(&c.Subscribers, "subs", 1000, "WebSocket subscriptions, -per-conn to a connection")
	fs.IntVar(&c.PerConn, "per-conn", 1, "subscriptions per connection, 1…100 (a lobby page's several views): ⌈subs ÷ per-conn⌉ connections")
	fs.IntVar(&c.Top, "top", 0, "weight of the shared top-N view in the mix (all weights 0: top only)")
	fs.IntVar(&c.Around, "around", 0, "weight of per-player around views (each subscription its own member)")
	fs.IntVar(&c.Rank, "rank", 0, "weight of single-rank views")
	fs.IntVar(&c.MembersViews, "members-views", 0, "weight of members views (10 members each)")
	fs.IntVar(&c.Limit, "limit", 10, "top-N")
	fs.IntVar(&c.Radius, "radius", 5, "around radius")
	fs.IntVar(&c.BoardMembers, "members", 1000, "board size, preloaded in batches of 1,000")
	fs.Float64Var(&c.Rate, "rate", 10000, "target submissions per second; 0: idle subscribers only")
	shape := fs.String("shape", "steady", "rate shape: steady, spikes (4× for 500 ms every 5 s) or ramp (a tenth to full)")
	fs.IntVar(&c.Batch, "batch", 100, "submissions per request")
	fs.IntVar(&c.Writers, "writers", 8, "concurrent writers")
	fs.IntVar(&c.Stalled, "stalled", 0, "extra connections, 0…subs, that subscribe (connection k to subscription k's view) and then never read, with a 4 KiB receive buffer and 1 KiB segments: the gateway should close them (4008) after its --slow-timeout")
	fs.DurationVar(&c.Duration, "d", 10*time.Second, "measured duration")
	fs.IntVar(&c.PerWorker, "per-worker", 9000, "most connections per worker process")
	fs.DurationVar(&c.ConnectTimeout, "connect-timeout", 2*time.Minute, "how long connecting the subscribers may take")
	fs.IntVar(&c.CloseRate, "close-rate", 0, "connections closed per second at the end, over all workers; 0: all at once")
	fs.DurationVar(&c.BurstFloorAt, "burst-floor-at", 0, "measure the burst floor this far into the measured phase: bare writers, one per gateway holding top-N watchers, write one frame to as many sockets of the same workers as watch the top-N (0: not measured)")
	fs.DurationVar(&c.BurstFloorEvery, "burst-floor-every", 0, "repeat the burst floor this often after -burst-floor-at while the measured phase lasts (0: once)")
	fs.IntVar(&c.BurstFloorSize, "burst-floor-size", 160, "bytes of the burst floor's frame (about a top-N diff's)")
	inProcess := fs.Bool("in-process", false, "run the subscribers in this process (small loads)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	quiet := fs.Bool("q", false, "no progress lines")
	fs.Parse(args)
	c.Shape = loadtest.Shape(*shape)
	var err error
	if c.Nodes, err = parseNodes(*nodes); err != nil {
		return err
	}
	if err := checkFanout(c); err != nil {
		return err
	}
	if c.Target, err = t.resolve(); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	worker := func() *exec.Cmd { return exec.Command(exe, "fanout-worker") }
	// The burst floor's writers always have their own process, as the
	// gateway has, even with the subscribers in this one.
	c.BurstWriterCommand = worker
	if !*inProcess {
		c.WorkerCommand = worker
	}
	if !*quiet {
		c.Progress = os.Stderr
	}
	stopProfile, err := cpuProfile()
	if err != nil {
		return err
	}
	rep, err := loadtest.RunFanout(ctx, c)
	stopProfile()
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(rep); jerr != nil && err == nil {
			err = jerr
		}
	} else {
		fmt.Print(rep)
	}
	return err
}

// checkFanout names the flag at fault in c.
func checkFanout(c loadtest.FanoutConfig) error {
	switch {
	case c.Shape != loadtest.Steady && c.Shape != loadtest.Spikes && c.Shape != loadtest.Ramp:
		return fmt.Errorf("-shape %q: want steady, spikes or ramp", c.Shape)
	case c.PerConn < 1 || c.PerConn > 100:
		return fmt.Errorf("-per-conn %d: want 1…100, the protocol's subscriptions per connection", c.PerConn)
	case c.PerConn > 1 && c.Redis != "" && c.Centrifugo == "":
		return fmt.Errorf("-per-conn %d: the Redis peer (-redis) takes one subscription per connection", c.PerConn)
	case c.PerConn > 1 && c.Centrifugo != "" && c.Around+c.Rank+c.MembersViews > 0:
		return fmt.Errorf("-per-conn %d: the Centrifugo peer (-centrifugo) takes several subscriptions per connection on -top views only", c.PerConn)
	case c.CentrifugoDelta && c.Centrifugo == "":
		return fmt.Errorf("-centrifugo-delta: needs -centrifugo")
	case c.Stalled < 0 || c.Stalled > c.Subscribers:
		return fmt.Errorf("-stalled %d: want 0…%d, at most -subs", c.Stalled, max(c.Subscribers, 0))
	case c.Centrifugo != "" && c.Redis == "":
		return fmt.Errorf("-centrifugo %s: needs -redis, the app's sorted set", c.Centrifugo)
	case c.Centrifugo != "" && viewFamilies(c) > 1:
		return fmt.Errorf("-centrifugo: the app publishes -top views, -around views, or -rank and -members-views: one of the three")
	case c.Stalled > 0 && c.Redis != "":
		return fmt.Errorf("-stalled %d: the Redis peer (-redis) has no slow-client close to measure", c.Stalled)
	}
	return nil
}

// viewFamilies is how many of the Centrifugo app's families of views (top;
// around; rank and members) c's weights ask for.
func viewFamilies(c loadtest.FanoutConfig) int {
	n := 0
	for _, w := range []int{c.Top, c.Around, c.Rank + c.MembersViews} {
		if w > 0 {
			n++
		}
	}
	return n
}

func fanoutTable() error {
	var rep loadtest.FanoutReport
	if err := json.NewDecoder(os.Stdin).Decode(&rep); err != nil {
		return err
	}
	fmt.Print(rep)
	return nil
}

// parseNodes reads -nodes: PID@host:port or PID, comma-separated.
func parseNodes(s string) ([]loadtest.Node, error) {
	if s == "" {
		return nil, nil
	}
	var out []loadtest.Node
	for _, part := range strings.Split(s, ",") {
		pid, pprof, _ := strings.Cut(part, "@")
		n, err := strconv.Atoi(pid)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-nodes %q: want PID@host:port or PID, comma-separated", part)
		}
		out = append(out, loadtest.Node{PID: n, Pprof: pprof})
	}
	return out, nil
}

// serverFlags registers the flags that name the server measured: a peer
// instead of the gateway, and the processes whose CPU and RSS are read. It
// returns -nodes, parsed after fs.Parse.
func serverFlags(fs *flag.FlagSet, c *loadtest.FanoutConfig) *string {
	fs.StringVar(&c.Pprof, "pprof", "", "the gateway's --pprof `address`: memory is measured after a garbage collection it runs")
	fs.IntVar(&c.PID, "pid", 0, "the server's `PID`: its CPU and RSS are read from /proc")
	fs.StringVar(&c.Redis, "redis", "", "run against the Redis pub/sub peer at this loopback `host:port` instead of the gateway")
	fs.StringVar(&c.Centrifugo, "centrifugo", "", "with -redis: run against Redis + app + Centrifugo, the Centrifugo server at this loopback `host:port` (the top N, or with -around each player's neighbourhood, or with -rank and -members-views each rank line and members list, published through its server API)")
	fs.StringVar(&c.CentrifugoKey, "centrifugo-key", "", "Centrifugo's server API key (http_api.key)")
	fs.BoolVar(&c.CentrifugoDelta, "centrifugo-delta", false, "with -centrifugo: use its delta option (subscribers ask for fossil deltas, the app publishes with \"delta\": true; the channels must allow it: allowed_delta_types with history and positioning)")
	return fs.String("nodes", "", "a cluster's server processes, comma-separated `PID@pprof-host:port` (or PID alone): CPU and RSS summed over them, each node's memory reported; -pid and -pprof are then not used")
}

// fanoutWorker runs a fan-out worker on stdin and stdout, profiled as
// cpuProfile says.
func fanoutWorker(ctx context.Context) error {
	stop, err := cpuProfile()
	if err != nil {
		return err
	}
	defer stop()
	return loadtest.RunFanoutWorker(ctx, os.Stdin, os.Stdout)
}

// cpuProfile starts, where RWLOAD_CPUPROFILE is set, this process's CPU
// profile into $RWLOAD_CPUPROFILE-<pid>.pprof (the load tool's side of a
// run's profile: the coordinator, with -in-process its subscribers, and
// each worker process); stop ends it. Nothing where it is not set.
func cpuProfile() (stop func(), err error) {
	prefix := os.Getenv("RWLOAD_CPUPROFILE")
	if prefix == "" {
		return func() {}, nil
	}
	f, err := os.Create(fmt.Sprintf("%s-%d.pprof", prefix, os.Getpid()))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
