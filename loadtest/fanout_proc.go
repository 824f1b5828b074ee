package loadtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux this runs on.
const clockTicks = 100

// procSample is a process's CPU time and resident memory at one moment.
type procSample struct {
	At  time.Time
	CPU time.Duration // user + system
	RSS int64         // bytes
}

// readProc samples /proc/<pid>; false where pid is 0 or unreadable.
func readProc(pid int) (procSample, bool) {
	if pid <= 0 {
		return procSample{}, false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procSample{}, false
	}
	// Fields after the command's closing parenthesis: state is field 3,
	// utime 14 and stime 15 (1-based), so indexes 11 and 12 here.
	i := strings.LastIndexByte(string(stat), ')')
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return procSample{}, false
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	s := procSample{At: time.Now(), CPU: time.Duration(ut+st) * time.Second / clockTicks}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, true
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			s.RSS = kb << 10
		}
	}
	return s, true
}

// cores is the CPU used between a and b in cores.
func cores(a, b procSample) float64 {
	return (b.CPU - a.CPU).Seconds() / b.At.Sub(a.At).Seconds()
}

// metrics are the gateway's /metrics series the fan-out report uses,
// keyed by series name with labels (as exposed, e.g.
// `rankwire_ws_push_tick_seconds_bucket{le="0.001"}`).
type metrics map[string]float64

// collectGarbage asks the gateway's pprof listener (host:port) for a heap
// profile with gc=1, which runs a garbage collection first, so that the
// heap figures scraped next count live memory rather than garbage not yet
// collected. Does nothing where pprof is empty.
func collectGarbage(ctx context.Context, pprof string) {
	if pprof == "" || checkLoopback("http://"+pprof) != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+pprof+"/debug/pprof/heap?gc=1", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// scrapeMetrics reads the gateway's /metrics from its metrics listener at
// base. It returns nil on failure:
// the figures it feeds are reported as absent.
func scrapeMetrics(ctx context.Context, base string) metrics {
	if base == "" || checkLoopback(base) != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	m := metrics{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !scraped(line) {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				m[line[:i]] = v
			}
		}
	}
	return m
}

// scraped tells whether a /metrics line is one the report uses.
func scraped(line string) bool {
	for _, p := range []string{"rankwire_ws_", "go_memstats_", "go_goroutines", "rankwire_publish_duration_", "rankwire_http_request_duration_"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// TickStats is the push tick's cost between two scrapes.
type TickStats struct {
	Ticks int     `json:"ticks"`
	Mean  float64 `json:"mean_seconds"`
	P99   float64 `json:"p99_seconds"` // upper bound of the histogram bucket; -1: above the largest

	Max  float64 `json:"max_bucket_seconds"`
	Busy float64 `json:"busy_fraction"` // tick time ÷ wall time
}

// tickStats computes the push tick's figures from two scrapes over elapsed.
func tickStats(a, b metrics, elapsed time.Duration) TickStats {
	const name = "rankwire_ws_push_tick_seconds"
	n := b[name+"_count"] - a[name+"_count"]
	if a == nil || b == nil || n <= 0 {
		return TickStats{}
	}
	sum := b[name+"_sum"] - a[name+"_sum"]
	t := TickStats{Ticks: int(n), Mean: sum / n, Busy: sum / elapsed.Seconds()}
	type bucket struct{ le, n float64 }
	var bs []bucket
	for k, v := range b {
		if le, ok := strings.CutPrefix(k, name+`_bucket{le="`); ok {
			f, err := strconv.ParseFloat(strings.TrimSuffix(le, `"}`), 64)
			if err == nil {
				bs = append(bs, bucket{f, v - a[k]})
			}
		}
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	for _, bk := range bs { // cumulative counts
		le := bk.le
		if math.IsInf(le, 1) {
			le = -1 // above the largest bucket; JSON has no +Inf
		}
		if t.P99 == 0 && bk.n >= 0.99*n {
			t.P99 = le
		}
		if t.Max == 0 && bk.n >= n {
			t.Max = le
		}
	}
	return t
}
