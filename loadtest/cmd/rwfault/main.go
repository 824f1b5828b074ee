// Command rwfault runs rankwire's fault suite (package
// github.com/rankwire/rankwire/loadtest/faults): it builds the gateway
// once, then for each fault and run starts a fresh cluster on loopback
// (three nodes; five for kill9-two), loads it through the Go SDK, injects
// the fault, heals it, checks that every acknowledged submission applied
// exactly once on every node and that the nodes serve the same standings,
// and prints a table per fault.
//
//	go run ./loadtest/cmd/rwfault -runs 5
//	go run ./loadtest/cmd/rwfault -faults kill9-leader,sigstop-leader -runs 1
//	sudo go run ./loadtest/cmd/rwfault -netns -runs 5   # with the partitions
//
// It exits 1 when any run lost or doubled a submission, left the nodes
// unequal, or could not be carried out.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rankwire/rankwire/loadtest/faults"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "rwfault:", err)
		os.Exit(1)
	}
}

func run() error {
	only := flag.String("faults", "", "the `faults` to inject, comma-separated (empty: every one; the partitions, disk-full-leader and power-loss-all only with -netns)")
	runs := flag.Int("runs", 3, "runs per fault, each on a fresh cluster")
	binary := flag.String("gateway", "", "the gateway `binary` (empty: go build ./cmd/gateway into the work directory)")
	keep := flag.Bool("keep", false, "keep the work directory (logs and data) when done")
	var cfg faults.Config
	flag.IntVar(&cfg.Writers, "writers", 6, "SDK writers")
	flag.DurationVar(&cfg.Hold, "hold", 0, "how long a fault lasts (0: 5s)")
	flag.DurationVar(&cfg.Between, "between", 0, "how long rolling-restart waits after a node is ready before it stops the next (0: at once)")
	flag.BoolVar(&cfg.Netns, "netns", false, "run every node in its own network namespace (root and iproute2; needed by the partitions)")
	verbose := flag.Bool("v", false, "log each fault's target")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work, err := os.MkdirTemp("", "rwfault-")
	if err != nil {
		return err
	}
	if !*keep {
		defer os.RemoveAll(work)
	} else {
		fmt.Printf("work directory (kept: the nodes' logs are <fault>-<run>/<node>.log): %s\n", work)
	}
	cfg.Binary = *binary
	if cfg.Binary == "" {
		cfg.Binary = filepath.Join(work, "gateway")
		if out, err := exec.Command("go", "build", "-o", cfg.Binary, "./cmd/gateway").CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/gateway: %v\n%s", err, out)
		}
	}
	if *verbose {
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	names := strings.Split(*only, ",")
	if *only == "" {
		names = nil
		for _, f := range faults.Faults {
			if cfg.Netns || (!f.Netns && !f.Tmpfs && !f.Lazy) { // partitions, tmpfs and FUSE need root
				names = append(names, f.Name)
			}
		}
	}
	return suite(ctx, cfg, names, *runs, work)
}

func suite(ctx context.Context, cfg faults.Config, names []string, runs int, work string) error {
	var results []faults.Result
	failed := false
	for _, name := range names {
		f, ok := faults.FaultByName(name)
		if !ok {
			return fmt.Errorf("-faults: no fault %q", name)
		}
		for i := range runs {
			dir := filepath.Join(work, fmt.Sprintf("%s-%d", name, i+1))
			if err := os.Mkdir(dir, 0o700); err != nil {
				return err
			}
			fmt.Printf("load average %s before %s run %d\n", loadAverage(), name, i+1)
			r := faults.RunOne(ctx, cfg, f, dir)
			faults.Detail(os.Stdout, r)
			faults.ChainDetail(os.Stdout, r)
			failed = failed || r.Err != nil || len(r.Violations) > 0
			results = append(results, r)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	fmt.Printf("\nload average %s at the end\n", loadAverage())
	faults.Report(os.Stdout, results)
	fmt.Println()
	faults.ChainReport(os.Stdout, results)
	if failed {
		return faults.ErrFailed
	}
	return nil
}

// loadAverage is /proc/loadavg's first three fields (1, 5 and 15 minutes),
// or "unknown": the box's load goes next to every figure the suite reports.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
