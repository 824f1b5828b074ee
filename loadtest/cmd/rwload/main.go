// Command rwload drives a rankwire gateway on this machine and measures it.
//
//	rwload keygen -out keys.json [-tenant bench] [-limit 10000000]
//	rwload submit -url http://127.0.0.1:8080 -keys keys.json [-clients 64] [-batch 1] [-d 10s] [-failover [-attempt 3s]]
//	rwload read   -url http://127.0.0.1:8080 -keys keys.json [-members 1000000] [-write-rate 20000] [-d 10s]
//	rwload fanout -url http://127.0.0.1:8080 -keys keys.json [-subs 10000] [-per-conn 1] [-top 1 -around 0 ...] [-rate 10000] [-stalled 0] [-d 10s] [-pid PID] [-json]
//	rwload floor [-conns 10000] [-size 600] [-interval 100ms] [-d 20s]
//	rwload probe [-interval 10ms] [-size 100] [-sync-dir DIR] [-d 0] [-window 5s] [-json]
//	rwload centrifugo-idle -url ws://127.0.0.1:18200/connection/websocket -conns 17500 -pid PID [-pprof host:port]
//
// keygen writes a key file for the gateway's --keys with one HS256 key and a
// high submission limit, so that the gateway's rate limit does not cap the
// measurement. submit and read mint an admin token from that file (or from
// -secret and -kid) and print a report. fanout -stalled N adds N connections
// that subscribe and never read, and reports how many the gateway closed as
// too slow (4008) beside the others' latency. floor needs no gateway: it
// measures the CPU a bare write(2) per message costs over loopback, the
// least any fan-out server pays here. probe measures the latency floor
// while a benchmark runs beside it: how late a 10 ms sleep wakes, and a
// 100-byte loopback TCP ping-pong, until -d passes or SIGINT/SIGTERM; the
// least any push latency here can be. centrifugo-idle holds idle subscribed
// connections to a Centrifugo server, the side-by-side of a node's reach.
// See package loadtest.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/rankwire/rankwire/loadtest"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch os.Args[1] {
	case "keygen":
		err = keygen(os.Args[2:])
	case "submit":
		err = submit(ctx, os.Args[2:])
	case "read":
		err = read(ctx, os.Args[2:])
	case "fanout":
		err = fanout(ctx, os.Args[2:])
	case "fanout-table": // a fanout -json report on stdin, printed as the table
		err = fanoutTable()
	case "fanout-worker": // started by fanout: config on stdin, reports on stdout
		err = fanoutWorker(ctx)
	case "floor":
		err = floor(ctx, os.Args[2:])
	case "probe":
		err = probe(ctx, os.Args[2:])
	case "centrifugo-idle":
		err = centrifugoIdle(ctx, os.Args[2:])
	case "floor-sink": // started by floor: ADDR CONNS
		err = floorSink(ctx, os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rwload:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: rwload keygen|submit|read|fanout|floor|probe|centrifugo-idle [flags]; rwload CMD -h for flags")
	os.Exit(2)
}

func keygen(args []string) error {
	fs := flag.NewFlagSet("keygen", flag.ExitOnError)
	out := fs.String("out", "keys.json", "key `file` to write")
	tenant := fs.String("tenant", "bench", "tenant name")
	limit := fs.Float64("limit", 10_000_000, "the tenant's submissions per second; 0: the gateway's default")
	fs.Parse(args)
	_, err := loadtest.WriteKeyFile(*out, *tenant, *limit)
	return err
}

// target holds the flags every load shares.
type target struct {
	url, metrics, keys, tenant, secret, kid, board string
}

func (t *target) register(fs *flag.FlagSet, board string) {
	fs.StringVar(&t.url, "url", "http://127.0.0.1:8080", "gateway base `URL`, or several of one cluster separated by commas: requests and connections spread over them in turn (loopback only)")
	fs.StringVar(&t.keys, "keys", "", "the gateway's key `file`; the tenant's first HS256 key mints the token")
	fs.StringVar(&t.tenant, "tenant", "bench", "tenant")
	fs.StringVar(&t.secret, "secret", "", "base64 HS256 `secret`, instead of -keys")
	fs.StringVar(&t.kid, "kid", "", "key id for -secret")
	fs.StringVar(&t.board, "board", board, "board")
	fs.StringVar(&t.metrics, "metrics", "http://127.0.0.1:9464", "base `URL` of the gateway's metrics listener (--metrics-addr; loopback only); empty: none")
}

func (t *target) resolve() (loadtest.Target, error) {
	var key loadtest.Key
	var err error
	if t.keys != "" {
		key, err = loadtest.LoadKey(t.keys, t.tenant)
	} else {
		key = loadtest.Key{Tenant: t.tenant, Kid: t.kid}
		key.Secret, err = base64.StdEncoding.DecodeString(t.secret)
	}
	if err != nil {
		return loadtest.Target{}, err
	}
	tok, err := key.Mint(time.Hour)
	return loadtest.Target{URL: t.url, Metrics: t.metrics, Token: tok, Board: t.board}, err
}

func submit(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("submit", flag.ExitOnError)
	var t target
	t.register(fs, "load")
	var c loadtest.SubmitConfig
	fs.IntVar(&c.Clients, "clients", 64, "concurrent HTTP clients")
	fs.IntVar(&c.Batch, "batch", 1, "items per request (1: the single form)")
	fs.DurationVar(&c.Duration, "d", 10*time.Second, "duration")
	fs.Int64Var(&c.MaxRequests, "n", 100_000_000, "at most this many requests")
	fs.IntVar(&c.Members, "members", 0, "pick members among this many; 0: a new member per submission")
	fs.BoolVar(&c.Failover, "failover", false, "each client uses every -url gateway, from its own, with the SDK's failover (for fault runs: see the longest write gap)")
	fs.DurationVar(&c.AttemptTimeout, "attempt", 0, "with -failover, the SDK's per-attempt `deadline`; 0: its default (3s)")
	quiet := fs.Bool("q", false, "no progress lines")
	fs.Parse(args)
	var err error
	if c.Target, err = t.resolve(); err != nil {
		return err
	}
	if !*quiet {
		c.Progress = os.Stderr
	}
	rep, err := loadtest.RunSubmit(ctx, c)
	fmt.Print(rep)
	return err
}

func read(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("read", flag.ExitOnError)
	var t target
	t.register(fs, "big")
	var c loadtest.ReadConfig
	fs.IntVar(&c.Members, "members", 1_000_000, "board size to preload (skipped where the board has it)")
	fs.IntVar(&c.Readers, "readers", 4, "concurrent reading clients")
	fs.Float64Var(&c.ReadRate, "read-rate", 2000, "reads per second over all readers; negative: unpaced")
	fs.Float64Var(&c.WriteRate, "write-rate", 0, "background submissions per second; 0: none")
	fs.IntVar(&c.WriteBatch, "write-batch", 100, "items per background write request")
	fs.IntVar(&c.WriteClients, "write-clients", 8, "background writing clients")
	fs.DurationVar(&c.Duration, "d", 10*time.Second, "duration of the measured phase")
	fs.Int64Var(&c.MaxReads, "n", 10_000_000, "at most this many reads")
	fs.Parse(args)
	var err error
	if c.Target, err = t.resolve(); err != nil {
		return err
	}
	rep, err := loadtest.RunRead(ctx, c)
	fmt.Print(rep)
	return err
}

func floor(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("floor", flag.ExitOnError)
	var cfg loadtest.FloorConfig
	fs.IntVar(&cfg.Conns, "conns", 10_000, "loopback connections (the sink holds as many; at most 19,000 here)")
	fs.IntVar(&cfg.Size, "size", 600, "bytes per message")
	fs.DurationVar(&cfg.Interval, "interval", 100*time.Millisecond, "one message per connection per interval")
	fs.DurationVar(&cfg.Duration, "d", 20*time.Second, "measured duration")
	fs.Parse(args)
	if cfg.Conns < 1 || cfg.Conns > 19_000 || cfg.Size < 1 || cfg.Interval <= 0 || cfg.Duration <= 0 {
		return fmt.Errorf("floor: -conns must be 1…19000, -size, -interval and -d positive")
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cfg.Sink = func(addr string, conns int) *exec.Cmd {
		return exec.Command(exe, loadtest.FloorSinkArgs(addr, conns)...)
	}
	r, err := loadtest.Floor(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Println(r)
	return nil
}

func probe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("probe", flag.ExitOnError)
	cfg := loadtest.ProbeConfig{Progress: os.Stderr}
	fs.DurationVar(&cfg.Interval, "interval", 10*time.Millisecond, "sleep of the wake-up loop, and between pings")
	fs.IntVar(&cfg.Size, "size", 100, "ping-pong bytes each way")
	fs.StringVar(&cfg.SyncDir, "sync-dir", "", "`dir` of a file appended and fsynced every interval (the disk's floor); empty: none")
	fs.DurationVar(&cfg.Duration, "d", 0, "duration; 0: until SIGINT or SIGTERM")
	fs.DurationVar(&cfg.Window, "window", 5*time.Second, "a summary line on stderr every `window`; 0: none")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	fs.Parse(args)
	if cfg.Interval <= 0 || cfg.Size < 1 || cfg.Duration < 0 || cfg.Window < 0 {
		return fmt.Errorf("probe: -interval and -size must be positive, -d and -window not negative")
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	r, err := loadtest.Probe(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(os.Stdout).Encode(r)
	}
	fmt.Println(r)
	return nil
}

func floorSink(ctx context.Context, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("floor-sink: want ADDR CONNS")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		return fmt.Errorf("floor-sink: CONNS: %w", err)
	}
	return loadtest.RunFloorSink(ctx, args[0], n)
}
