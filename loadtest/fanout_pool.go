package loadtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// workerPool is the coordinator's side of its subscriber workers: their
// stdins (closing one stops the worker), their latest reports and their
// finals. Safe for concurrent use.
type workerPool struct {
	workers []*worker
	// updated holds a token once any worker's progress report came since
	// it was last taken (capacity 1: a waiter that checks, then takes it,
	// misses no report); awaitReports waits on it.
	updated chan struct{}
	perConn int // subscriptions per connection: progress lines show connections where above 1
	once    sync.Once
	finals  []workerReport
}

type worker struct {
	stdin   io.WriteCloser
	updated chan<- struct{}   // the pool's: signalled after each progress report
	wait    func()            // waits for the process or goroutine to end
	final   chan workerReport // receives the final report, once
	mu      sync.Mutex        // guards last
	last    workerReport
}

// startWorkers starts one worker per config, as a process where
// cfg.WorkerCommand is set, else as a goroutine, and sends each its config.
func startWorkers(ctx context.Context, cfg FanoutConfig, wcs []workerConfig) *workerPool {
	p := &workerPool{perConn: cfg.PerConn, updated: make(chan struct{}, 1)}
	for _, wc := range wcs {
		w := &worker{final: make(chan workerReport, 1), updated: p.updated}
		var stdout io.Reader
		if cfg.WorkerCommand != nil {
			stdout = w.startProcess(cfg.WorkerCommand())
		} else {
			stdout = w.startInProcess(ctx)
		}
		line, _ := json.Marshal(wc) // cannot fail
		w.stdin.Write(append(line, '\n'))
		p.workers = append(p.workers, w)
		go w.read(stdout) // ends at the worker's stdout EOF
	}
	return p
}

// startProcess starts cmd with pipes; a process that cannot start sends
// an error as its final report.
func (w *worker) startProcess(cmd *exec.Cmd) io.Reader {
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	w.stdin = stdin
	if err := cmd.Start(); err != nil {
		w.final <- workerReport{Final: true, Err: err.Error()}
		w.wait = func() {}
		return eofReader{}
	}
	w.wait = func() {
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill() // by its PID: a worker that did not stop by itself
			<-done
		}
	}
	return stdout
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

func (w *worker) startInProcess(ctx context.Context) io.Reader {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	w.stdin = inW
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := RunFanoutWorker(ctx, inR, outW)
		inR.Close()
		outW.CloseWithError(err)
	}()
	w.wait = func() { <-done }
	return outR
}

func (w *worker) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var rep workerReport
		if json.Unmarshal(sc.Bytes(), &rep) != nil {
			continue
		}
		if rep.Final {
			select {
			case w.final <- rep:
			default:
			}
			continue
		}
		w.mu.Lock()
		w.last = rep
		w.mu.Unlock()
		select {
		case w.updated <- struct{}{}:
		default: // a token is there already: the waiter looks at every worker's latest
		}
	}
	select {
	case w.final <- workerReport{Final: true, Err: "worker ended without a report"}:
	default:
	}
}

// sum adds up the workers' latest counters.
func (p *workerPool) sum() workerReport {
	var s workerReport
	for _, w := range p.workers {
		w.mu.Lock()
		r := w.last
		w.mu.Unlock()
		s.Connected += r.Connected
		s.Connections += r.Connections
		s.Messages += r.Messages
		s.Bytes += r.Bytes
		s.Wire += r.Wire
		s.Deltas += r.Deltas
		s.DeltaBytes += r.DeltaBytes
		s.Heartbeats += r.Heartbeats
		s.HeartbeatBytes += r.HeartbeatBytes
		s.HeartbeatWire += r.HeartbeatWire
		s.Gaps += r.Gaps
		s.Reconnects += r.Reconnects
		s.DialErrors += r.DialErrors
		s.CPU += r.CPU
		s.Failed += r.Failed
		s.Stalled += r.Stalled
		s.StalledFailed += r.StalledFailed
	}
	return s
}

// waitConnected waits until n subscriptions and stalled connections are
// connected (or given up), timeout passes or ctx ends, printing a line a
// second, and returns the workers' counters then: Connected subscriptions
// on Connections, and Stalled.
func (p *workerPool) waitConnected(ctx context.Context, n, stalled int, timeout time.Duration, progress io.Writer) workerReport {
	deadline := time.Now().Add(timeout)
	last := time.Now()
	for ctx.Err() == nil && time.Now().Before(deadline) {
		s := p.sum()
		if s.Connected+s.Failed >= int64(n) && s.Stalled+s.StalledFailed >= int64(stalled) {
			return s
		}
		if progress != nil && time.Since(last) >= time.Second {
			fmt.Fprintf(progress, "  connecting: %d/%d%s%s (dial errors %d)\n", s.Connected, n, p.connections(s), stalledProgress(s, stalled), s.DialErrors)
			last = time.Now()
		}
		sleep(ctx, 50*time.Millisecond)
	}
	return p.sum()
}

// connections is s's connections for a progress line, where they differ
// from the subscriptions: " on N connections", else "".
func (p *workerPool) connections(s workerReport) string {
	if p.perConn <= 1 {
		return ""
	}
	return fmt.Sprintf(" on %d connections", s.Connections)
}

// stalledProgress is s's stalled connections for a progress line, where
// any were asked for: ", stalled N/M", else "".
func stalledProgress(s workerReport, stalled int) string {
	if stalled == 0 {
		return ""
	}
	return fmt.Sprintf(", stalled %d/%d", s.Stalled, stalled)
}

// finalReportWait is how long stop waits for a worker's final report. A
// worker sends it once all its connections have closed; on a starved box
// 8,000 closes took longer than 30 s (docs/BENCHMARKS.md, "100,000
// WebSockets with the latency floor beside them": four runs lost a
// worker's report, and with it its views received, that way).
const finalReportWait = 2 * time.Minute

// stop closes every worker's stdin, collects the final reports (waiting
// at most finalReportWait for each) and waits for the workers to end.
// Idempotent.
func (p *workerPool) stop() []workerReport {
	p.once.Do(func() {
		for _, w := range p.workers {
			w.stdin.Close()
		}
		for _, w := range p.workers {
			select {
			case r := <-w.final:
				p.finals = append(p.finals, r)
			case <-time.After(finalReportWait):
				p.finals = append(p.finals, w.lastAsFinal())
			}
			w.wait()
		}
	})
	return p.finals
}

// lastAsFinal stands in for a final report that did not come: the
// worker's last progress report (its counters: connections, views
// received, gaps, reconnects), without the histograms and error tables
// only a final report carries, and an error saying so.
func (w *worker) lastAsFinal() workerReport {
	w.mu.Lock()
	r := w.last
	w.mu.Unlock()
	r.Final = true
	r.Err = fmt.Sprintf("no final report in %v: counters from its last progress report, no latencies", finalReportWait)
	return r
}
