package loadtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// ProbeConfig is a run of `rwload probe`: the latency floor of this machine
// while something else loads it. Two loops run side by side in the probe
// process until ctx ends or Duration passes:
//
//   - wake-up: sleep Interval, and record how late the wake-up came (the
//     overshoot past Interval): the least a process here waits to run
//     again once it has something to do, e.g. a push tick or a read;
//   - ping-pong: every Interval, write Size bytes on a loopback TCP
//     connection to an echo goroutine and read them back, recording the
//     round trip: two wake-ups through the network poller and the
//     kernel's loopback, the least a push over a socket pays here;
//   - fsync, where SyncDir is set: every Interval, append 512 bytes to a
//     file in SyncDir and fsync it (probe_sync.go), the least a write
//     acknowledged once on disk waits for the disk here.
//
// Neither loop does work of its own, so on an idle machine both are tens
// of microseconds; under load they show how long a runnable process waits
// for a core, which bounds a benchmark's latency percentiles from below.
type ProbeConfig struct {
	Interval time.Duration // between samples of each loop (10 ms)
	Size     int           // ping-pong bytes each way (100)
	Duration time.Duration // 0: until ctx ends
	SyncDir  string        // "": no fsync loop; else its file's directory (the gateway's file system)
	Window   time.Duration // 0: no progress lines; else one per Window to Progress
	Progress io.Writer
}

// ProbeReport is what Probe measured over its whole run, and per window.
type ProbeReport struct {
	Seconds  float64       `json:"seconds"`
	Wake     Latency       `json:"wake_overshoot"`  // past Interval
	PingPong Latency       `json:"ping_pong"`       // round trip
	Sync     *Latency      `json:"fsync,omitempty"` // append and fsync; nil: no SyncDir
	Windows  []ProbeWindow `json:"windows,omitempty"`
}

// ProbeWindow is one Window of a probe: At is its end, in seconds since the
// probe began.
type ProbeWindow struct {
	At       float64 `json:"at_seconds"`
	Wake     Latency `json:"wake_overshoot"`
	PingPong Latency `json:"ping_pong"`
}

func (r ProbeReport) String() string {
	s := fmt.Sprintf("probe (%.0f s): wake-up overshoot %s; ping-pong %s", r.Seconds, r.Wake.Brief(), r.PingPong.Brief())
	if r.Sync != nil {
		s += "; fsync " + r.Sync.Brief()
	}
	return s
}

func (w ProbeWindow) String() string {
	return fmt.Sprintf("probe at %5.0f s: wake-up overshoot %s; ping-pong %s", w.At, w.Wake.Brief(), w.PingPong.Brief())
}

// Brief is the count, p50, p99 and max.
func (l Latency) Brief() string {
	return fmt.Sprintf("n=%d p50=%v p99=%v max=%v", l.Count, round(l.P50), round(l.P99), round(l.Max))
}

// probeSeries holds one loop's samples, in the package's histograms (2 %
// resolution, fixed memory however long the probe runs): those of the
// current window and all of them. Safe for concurrent use.
type probeSeries struct {
	mu          sync.Mutex // guards window's swap; Hist.Add is atomic
	window, all *Hist
}

func newProbeSeries() *probeSeries { return &probeSeries{window: newHist(), all: newHist()} }

func (s *probeSeries) add(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all.Add(d)
	s.window.Add(d)
}

// takeWindow summarises the current window and starts the next.
func (s *probeSeries) takeWindow() Latency {
	s.mu.Lock()
	w := s.window
	s.window = newHist()
	s.mu.Unlock()
	return w.Latency()
}

func (s *probeSeries) total() Latency {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all.Latency()
}

// Probe runs the two loops until ctx ends or cfg.Duration passes, and
// returns what they measured; ctx ending is not an error.
func Probe(ctx context.Context, cfg ProbeConfig) (ProbeReport, error) {
	if cfg.Interval <= 0 || cfg.Size < 1 {
		return ProbeReport{}, fmt.Errorf("probe: interval %v and size %d must be positive", cfg.Interval, cfg.Size)
	}
	start := time.Now()
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	client, stopEcho, err := startEcho(cfg.Size)
	if err != nil {
		return ProbeReport{}, err
	}
	defer stopEcho()
	wake, ping, fsync := newProbeSeries(), newProbeSeries(), newProbeSeries()
	var wg sync.WaitGroup
	errc, syncErr := make(chan error, 1), make(chan error, 1)
	wg.Go(func() { probeWake(ctx, cfg.Interval, wake) })
	wg.Go(func() { errc <- probePing(ctx, client, cfg, ping) })
	if cfg.SyncDir != "" {
		wg.Go(func() { syncErr <- probeSync(ctx, cfg.SyncDir, cfg.Interval, fsync) })
	} else {
		syncErr <- nil
	}
	windows := probeWindows(ctx, cfg, start, wake, ping)
	wg.Wait()
	r := ProbeReport{Seconds: time.Since(start).Seconds(), Wake: wake.total(), PingPong: ping.total(), Windows: windows}
	if cfg.SyncDir != "" {
		l := fsync.total()
		r.Sync = &l
	}
	if err := <-errc; err != nil {
		return r, err
	}
	return r, <-syncErr
}

// probeWindows prints and keeps a summary every cfg.Window until ctx ends.
func probeWindows(ctx context.Context, cfg ProbeConfig, start time.Time, wake, ping *probeSeries) []ProbeWindow {
	if cfg.Window <= 0 {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(cfg.Window)
	defer t.Stop()
	var out []ProbeWindow
	for {
		select {
		case <-ctx.Done():
			return out
		case now := <-t.C:
			w := ProbeWindow{At: now.Sub(start).Seconds(), Wake: wake.takeWindow(), PingPong: ping.takeWindow()}
			out = append(out, w)
			if cfg.Progress != nil {
				fmt.Fprintln(cfg.Progress, w)
			}
		}
	}
}

// probeWake sleeps interval again and again, recording each overshoot.
func probeWake(ctx context.Context, interval time.Duration, s *probeSeries) {
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		begin := time.Now()
		t.Reset(interval)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.add(max(time.Since(begin)-interval, 0))
	}
}

// probePing sends size bytes on conn every cfg.Interval and reads the echo,
// recording each round trip. It returns nil when ctx ends.
func probePing(ctx context.Context, conn net.Conn, cfg ProbeConfig, s *probeSeries) error {
	msg := make([]byte, cfg.Size)
	buf := make([]byte, cfg.Size)
	return timedTicks(ctx, cfg.Interval, s, func() error {
		if _, err := conn.Write(msg); err != nil {
			return fmt.Errorf("probe: ping: %w", err)
		}
		if _, err := io.ReadFull(conn, buf); err != nil {
			return fmt.Errorf("probe: pong: %w", err)
		}
		return nil
	})
}

// timedTicks runs step every interval until ctx ends (nil) or step fails
// (its error), recording how long each step took: the loop of every probe
// that times an operation (the wake-up probe times a sleep's overshoot
// instead).
func timedTicks(ctx context.Context, interval time.Duration, s *probeSeries, step func() error) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		begin := time.Now()
		if err := step(); err != nil {
			return err
		}
		s.add(time.Since(begin))
	}
}

// startEcho listens on loopback, connects to itself, and echoes every
// size-byte message from the accepted side in a goroutine. It returns the
// client side and a stop that closes both and waits for the goroutine.
func startEcho(size int) (net.Conn, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("probe: %w", err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil, nil, fmt.Errorf("probe: %w", err)
	}
	server, err := ln.Accept()
	if err != nil {
		client.Close()
		return nil, nil, fmt.Errorf("probe: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, size)
		for {
			if _, err := io.ReadFull(server, buf); err != nil {
				return // closed by stop
			}
			if _, err := server.Write(buf); err != nil {
				return
			}
		}
	}()
	stop := func() {
		client.Close()
		server.Close()
		<-done
	}
	return client, stop, nil
}
