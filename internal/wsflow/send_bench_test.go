//go:build unix

package wsflow

import (
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSendFrames is what a message's write costs as the number of
// frames one Send carries grows (docs/BENCHMARKS.md, "Several messages per
// write"): per op, one Send of k data frames of a 150-byte diff (a top
// 10's diff in shape 2) over loopback TCP, read by a goroutine that
// drains the socket as a client does. cpu-ns/msg is the process's CPU
// time (getrusage: the writer's syscall, which on loopback also runs the
// receiver's TCP path, and the reader's reads) per message; ns/msg the
// wall time per message.
func BenchmarkSendFrames(b *testing.B) {
	for _, k := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("frames=%d", k), func(b *testing.B) {
			f, client := benchPair(b)
			var wg sync.WaitGroup
			wg.Go(func() { io.Copy(io.Discard, client) })
			payload := make([]byte, 150)
			var turn []byte
			for range k {
				turn = append(AppendTextHeader(turn, len(payload)), payload...)
			}
			b.ResetTimer()
			cpu0 := benchCPU(b)
			for range b.N {
				for f.Busy() { // the reader is behind: wait for the drain, as the writers do
					time.Sleep(10 * time.Microsecond)
				}
				if err := f.Send(turn); err != nil {
					b.Fatal(err)
				}
			}
			msgs := float64(b.N * k)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/msgs, "ns/msg")
			b.ReportMetric(float64(benchCPU(b)-cpu0)/msgs, "cpu-ns/msg")
			f.Close()
			client.Close()
			wg.Wait()
		})
	}
}

// benchPair returns a Conn over the server side of a loopback TCP
// connection with default buffers, and the client side.
func benchPair(b *testing.B) (*Conn, net.Conn) {
	b.Helper()
	server, client := loopbackPair(b)
	return NewConn(server, 5*time.Second), client
}

// benchCPU returns the process's user and system CPU time in nanoseconds.
func benchCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skip("getrusage:", err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
