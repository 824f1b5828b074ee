package live

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFanoutSSE is BenchmarkFanout with event streams instead of
// WebSockets: the same hub, board, view, submissions and clients' work (each
// decodes every message's JSON for its seq), so that the two ns/op compare
// the transports' cost per delivered message.
func BenchmarkFanoutSSE(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("conns=%d", n), func(b *testing.B) { benchFanoutSSE(b, n) })
	}
}

func benchFanoutSSE(b *testing.B, n int) {
	h, p, wsURL, tok := fanoutPlane(b)
	url := "http" + strings.TrimPrefix(wsURL, "ws")
	url = strings.TrimSuffix(url, "/v1/ws") + "/v1/stream?board=fan&kind=top&limit=10&id=s"
	st := &fanState{n: int64(n), done: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	client := &http.Client{Transport: &http.Transport{}}
	b.Cleanup(func() { cancel(); wg.Wait(); client.CloseIdleConnections() })
	for range n {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := client.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatal(err, resp)
		}
		wg.Go(func() { st.readSSE(resp) })
	}
	st.measure(b, ctx, h, p, "streams")
}

// readSSE reads a stream's events until it ends, counting it once per op,
// as read does a WebSocket's.
func (st *fanState) readSSE(resp *http.Response) {
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	var counted uint64
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		data, ok := strings.CutPrefix(string(line), "data: ")
		if !ok {
			continue
		}
		var m struct{ Seq uint64 }
		if json.Unmarshal([]byte(data), &m) != nil {
			continue
		}
		if w := st.want.Load(); w != 0 && m.Seq >= w && counted != w {
			counted = w
			if st.seen.Add(1) == st.n {
				st.done <- struct{}{}
			}
		}
	}
}

// processCPU returns the CPU time (user and system) the process has used:
// the plane's and the benchmark's clients', which share it.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPUPerMessage reports cpu, spent on b.N ops of n deliveries each,
// as cpu-ns/msg: the figure that compares BenchmarkFanout and
// BenchmarkFanoutSSE (wall time per op also waits for the feed's tick).
func reportCPUPerMessage(b *testing.B, cpu time.Duration, n int) {
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*n), "cpu-ns/msg")
}
