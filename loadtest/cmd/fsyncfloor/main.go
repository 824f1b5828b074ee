// Command fsyncfloor measures what the disk under a directory allows a
// store that fsyncs every event: an append of -size bytes and its fsync in
// a loop, in -files files at once, for -d, and the CPU each fsync costs
// the caller. loadtest/cluster_bench.sh runs it in each round of `sync`
// (docs/BENCHMARKS.md, "Where --sync always loses against lazy").
//
//	fsyncfloor -dir DIR [-size 1400] [-files 1] [-d 2s] [-json]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/rankwire/rankwire/loadtest"
)

func main() {
	cfg := loadtest.FsyncFloorConfig{}
	flag.StringVar(&cfg.Dir, "dir", ".", "`dir` on the file system measured (the gateway's --data)")
	flag.IntVar(&cfg.Size, "size", 1400, "bytes appended before each fsync (one stored event)")
	flag.IntVar(&cfg.Files, "files", 1, "files appended and fsynced at once")
	flag.DurationVar(&cfg.Duration, "d", 2*time.Second, "duration")
	asJSON := flag.Bool("json", false, "print the report as JSON")
	flag.Parse()
	r, err := loadtest.FsyncFloor(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fsyncfloor:", err)
		os.Exit(1)
	}
	if *asJSON {
		if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
			fmt.Fprintln(os.Stderr, "fsyncfloor:", err)
			os.Exit(1)
		}
		return
	}
	fmt.Println(r)
}
