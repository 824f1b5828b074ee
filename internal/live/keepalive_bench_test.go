package live

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/rankwire/rankwire/internal/await"
)

// BenchmarkKeepAlive is the cost of keeping idle connections alive: N
// authenticated WebSockets over loopback, none subscribed, pinged every
// second (heartbeats off), held for keepAliveHold per iteration. It
// reports the process's CPU time (getrusage: user and system, every
// goroutine, the clients' included: they read, answer each ping with a
// pong and count it) per ping the clients received, and as a share of one
// core. Compare branches in the same sitting; run with -benchtime=1x.
func BenchmarkKeepAlive(b *testing.B) {
	for _, n := range []int{2000} {
		b.Run(fmt.Sprintf("conns=%d", n), func(b *testing.B) {
			_, p, url, tok := fanoutPlane(b, Options{PingInterval: time.Second, HeartbeatInterval: -1})
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			b.Cleanup(func() { cancel(); wg.Wait() })
			var pings atomic.Int64
			opts := &websocket.DialOptions{OnPingReceived: func(context.Context, []byte) bool {
				pings.Add(1)
				return true
			}}
			dialReaders(b, ctx, &wg, n, url, tok, opts)
			await.For(b, 30*time.Second, func() error {
				if got := len(p.connections()); got < n {
					return fmt.Errorf("%d of %d connections open", got, n)
				}
				return nil
			})
			// Every connection in its steady state of pings: each has had
			// one ping and answered it.
			await.For(b, 30*time.Second, func() error {
				for _, lc := range p.connections() {
					if c, ok := lc.(*wsConn); ok && c.ka.heard.Load() == 0 {
						return fmt.Errorf("a connection has answered no ping yet")
					}
				}
				return nil
			})
			b.ResetTimer()
			start, cpu0, pings0 := time.Now(), cpuTime(b), pings.Load()
			for range b.N {
				time.Sleep(keepAliveHold) // what is measured: idle connections, kept alive
			}
			cpu, wall, got := cpuTime(b)-cpu0, time.Since(start), pings.Load()-pings0
			b.StopTimer()
			if open := len(p.connections()); open != n {
				b.Fatalf("%d of %d connections open after the hold", open, n)
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(max(got, 1)), "cpu-µs/ping")
			b.ReportMetric(float64(got)/wall.Seconds(), "pings/s")
			b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu-%")
		})
	}
}

// keepAliveHold is one iteration of BenchmarkKeepAlive.
const keepAliveHold = 5 * time.Second

// cpuTime is the process's CPU time so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// dialReaders opens n WebSockets to url with tok, each read on a goroutine
// of wg until ctx ends (the benchmarks' idle clients: they answer pings).
func dialReaders(b *testing.B, ctx context.Context, wg *sync.WaitGroup, n int, url, tok string, opts *websocket.DialOptions) {
	b.Helper()
	for range n {
		c, _, err := websocket.Dial(ctx, url+"?access_token="+tok, opts)
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			defer c.CloseNow()
			for _, _, err := c.Read(ctx); err == nil; _, _, err = c.Read(ctx) {
			}
		})
	}
}
