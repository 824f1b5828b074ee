package loadtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// FloorConfig is a run of `rwload floor`: the kernel's price of a fan-out
// message, measured with nothing but a write(2) per message. A writer
// process (this one) accepts Conns loopback TCP connections from a sink
// process that reads and discards; every Interval it writes one message
// of Size bytes to each connection, spread over GOMAXPROCS goroutines,
// with Go's plain net.Conn.Write. Its CPU per write is the least any
// server pays to deliver one message per connection over loopback here:
// the TCP send and, on loopback, the receive side's softirq and wake-up.
type FloorConfig struct {
	Conns    int
	Size     int
	Interval time.Duration
	Duration time.Duration
	Sink     func(addr string, conns int) *exec.Cmd // the sink process
}

// FloorReport is what Floor measured.
type FloorReport struct {
	Writes        int64   `json:"writes"`
	WritesPerSec  float64 `json:"writes_per_second"`
	WriterCores   float64 `json:"writer_cores"`
	MicrosPerMsg  float64 `json:"cpu_us_per_write"`
	SinkCores     float64 `json:"sink_cores"`
	SinkMicrosMsg float64 `json:"sink_cpu_us_per_message"`
}

func (r FloorReport) String() string {
	return fmt.Sprintf("floor: %d writes (%.0f/s); writer %.2f cores, %.2f µs CPU per write; sink %.2f cores, %.2f µs per message",
		r.Writes, r.WritesPerSec, r.WriterCores, r.MicrosPerMsg, r.SinkCores, r.SinkMicrosMsg)
}

// Floor runs the measurement: connect, one warm-up interval, then
// cfg.Duration of ticks.
func Floor(ctx context.Context, cfg FloorConfig) (FloorReport, error) {
	if _, err := RaiseFileLimit(); err != nil {
		return FloorReport{}, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return FloorReport{}, err
	}
	defer ln.Close()
	sink := cfg.Sink(ln.Addr().String(), cfg.Conns)
	sink.Stderr = os.Stderr
	if err := sink.Start(); err != nil {
		return FloorReport{}, fmt.Errorf("floor sink: %w", err)
	}
	defer func() {
		sink.Process.Kill()
		sink.Wait()
	}()
	conns := make([]net.Conn, 0, cfg.Conns)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for len(conns) < cfg.Conns {
		c, err := ln.Accept()
		if err != nil {
			return FloorReport{}, fmt.Errorf("floor: accept: %w", err)
		}
		conns = append(conns, c)
	}
	msg := make([]byte, cfg.Size)
	tick(conns, msg) // warm-up: buffers and connections settle
	self, sinkPID := os.Getpid(), sink.Process.Pid
	s0, _ := readProc(self)
	k0, _ := readProc(sinkPID)
	var writes int64
	t := time.NewTicker(cfg.Interval)
	defer t.Stop()
	end := time.Now().Add(cfg.Duration)
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			return FloorReport{}, ctx.Err()
		case <-t.C:
		}
		writes += tick(conns, msg)
	}
	s1, _ := readProc(self)
	k1, _ := readProc(sinkPID)
	wall := s1.At.Sub(s0.At).Seconds()
	r := FloorReport{Writes: writes, WritesPerSec: float64(writes) / wall}
	r.WriterCores = (s1.CPU - s0.CPU).Seconds() / wall
	r.SinkCores = (k1.CPU - k0.CPU).Seconds() / wall
	if writes > 0 {
		r.MicrosPerMsg = float64((s1.CPU - s0.CPU).Microseconds()) / float64(writes)
		r.SinkMicrosMsg = float64((k1.CPU - k0.CPU).Microseconds()) / float64(writes)
	}
	return r, nil
}

// tick writes msg once to every connection, GOMAXPROCS goroutines each
// over its share, and returns how many writes succeeded.
func tick(conns []net.Conn, msg []byte) int64 {
	n := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	counts := make([]int64, n)
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(conns); i += n {
				if _, err := conns[i].Write(msg); err == nil {
					counts[g]++
				}
			}
		}()
	}
	wg.Wait()
	var total int64
	for _, c := range counts {
		total += c
	}
	return total
}

// RunFloorSink is the sink process: it dials conns connections to addr
// and reads and discards everything until the writer closes them or ctx
// ends.
func RunFloorSink(ctx context.Context, addr string, conns int) error {
	if _, err := RaiseFileLimit(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	var mu sync.Mutex // guards open
	open := make([]net.Conn, 0, conns)
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range open {
			c.Close()
		}
	})
	defer stop()
	defer wg.Wait()
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return fmt.Errorf("floor sink: %w", err)
		}
		mu.Lock()
		open = append(open, c)
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			io.Copy(io.Discard, c)
			c.Close()
		}()
	}
	return nil
}

// FloorSinkArgs are the arguments that make rwload a floor sink.
func FloorSinkArgs(addr string, conns int) []string {
	return []string{"floor-sink", addr, strconv.Itoa(conns)}
}
