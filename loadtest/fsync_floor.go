package loadtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// FsyncFloorConfig is one run of FsyncFloor.
type FsyncFloorConfig struct {
	Dir      string        // the file system measured: the gateway's --data
	Size     int           // bytes appended before each fsync: one stored event
	Files    int           // files appended and fsynced at once, one goroutine each
	Duration time.Duration // how long the loops run
}

// FsyncFloorReport is what the disk allows a writer that fsyncs every
// append, and what each fsync costs this process in CPU. With Files = 1,
// PerSecond is the most events a store that fsyncs each of them one at a
// time can write (nats-server's SyncAlways on one node); UserUS and SysUS
// are the CPU the fsync path costs the caller per fsync (the kernel's
// flush work done in the caller's context counts as system time; work in
// kernel threads and interrupts does not: measure those from /proc).
type FsyncFloorReport struct {
	Size      int     `json:"size"`
	Files     int     `json:"files"`
	Seconds   float64 `json:"seconds"`
	Fsyncs    int     `json:"fsyncs"`
	PerSecond float64 `json:"fsyncs_per_s"`
	Wall      Latency `json:"wall"`    // one append and its fsync
	UserUS    float64 `json:"user_us"` // process user CPU per fsync, µs
	SysUS     float64 `json:"sys_us"`  // process system CPU per fsync, µs
}

func (r FsyncFloorReport) String() string {
	return fmt.Sprintf("fsync floor: %d B x %d files: %d fsyncs in %.2f s, %.0f/s; append+fsync %s; CPU per fsync user %.1f µs sys %.1f µs",
		r.Size, r.Files, r.Fsyncs, r.Seconds, r.PerSecond, r.Wall.Brief(), r.UserUS, r.SysUS)
}

// FsyncFloor appends cfg.Size bytes to each of cfg.Files new files in
// cfg.Dir and fsyncs it, in a loop per file, for cfg.Duration or until ctx
// ends, and reports the rate, each round's wall time and the CPU the
// process spent per fsync. The files are removed at the end.
func FsyncFloor(ctx context.Context, cfg FsyncFloorConfig) (FsyncFloorReport, error) {
	if cfg.Size < 1 || cfg.Files < 1 || cfg.Duration <= 0 {
		return FsyncFloorReport{}, fmt.Errorf("fsync floor: size %d, files %d and duration %v must be positive", cfg.Size, cfg.Files, cfg.Duration)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	before, err := rusage()
	if err != nil {
		return FsyncFloorReport{}, err
	}
	h := newHist()
	errs := make([]error, cfg.Files)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range cfg.Files {
		wg.Go(func() { errs[i] = fsyncLoop(ctx, cfg.Dir, cfg.Size, h) })
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	after, err := rusage()
	if err != nil {
		return FsyncFloorReport{}, err
	}
	if err := errors.Join(errs...); err != nil {
		return FsyncFloorReport{}, err
	}
	l := h.Latency()
	r := FsyncFloorReport{Size: cfg.Size, Files: cfg.Files, Seconds: secs, Fsyncs: l.Count, Wall: l}
	if l.Count > 0 {
		r.PerSecond = float64(l.Count) / secs
		r.UserUS = float64(after.user-before.user) / 1e3 / float64(l.Count)
		r.SysUS = float64(after.sys-before.sys) / 1e3 / float64(l.Count)
	}
	return r, nil
}

// fsyncLoop appends size bytes to a new file in dir and fsyncs it until
// ctx ends, recording each round in h.
func fsyncLoop(ctx context.Context, dir string, size int, h *Hist) error {
	a, err := newSyncAppender(dir, "rwload-fsync-floor-*", size)
	if err != nil {
		return fmt.Errorf("fsync floor: %w", err)
	}
	defer a.close()
	for ctx.Err() == nil {
		t := time.Now()
		if err := a.step(); err != nil {
			return fmt.Errorf("fsync floor: %w", err)
		}
		h.Add(time.Since(t))
	}
	return nil
}

// syncAppender is a new file to which each step appends size bytes and
// fsyncs them: one event stored by a writer that fsyncs each. FsyncFloor
// runs it as fast as the disk allows, probeSync at an interval.
type syncAppender struct {
	f   *os.File
	buf []byte
}

// newSyncAppender creates the file in dir, named after pattern
// (os.CreateTemp); close removes it.
func newSyncAppender(dir, pattern string, size int) (*syncAppender, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	return &syncAppender{f: f, buf: make([]byte, size)}, nil
}

// step appends the bytes and fsyncs the file.
func (a *syncAppender) step() error {
	if _, err := a.f.Write(a.buf); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("fsync: %w", err)
	}
	return nil
}

// close closes the file and removes it.
func (a *syncAppender) close() {
	a.f.Close()
	os.Remove(a.f.Name())
}

// cpuTimes is a process's user and system CPU, in nanoseconds.
type cpuTimes struct{ user, sys int64 }

func rusage() (cpuTimes, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuTimes{}, fmt.Errorf("fsync floor: getrusage: %w", err)
	}
	return cpuTimes{user: ru.Utime.Nano(), sys: ru.Stime.Nano()}, nil
}
