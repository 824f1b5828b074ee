package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// stopBound is how long a gateway may take to exit after SIGTERM before a
// test calls it hung: the gateway bounds every shutdown step (a few
// seconds in all), so 30 s means a step without a bound.
const stopBound = 30 * time.Second

// errHung is the error of a gateway that did not exit within its bound.
var errHung = errors.New("hung shutdown")

// shutdownPackages are the stack frames that say where a shutdown hangs:
// the gateway's own code and JetStream's cluster and store.
var shutdownPackages = regexp.MustCompile(`rankwire/rankwire/|server\.\(\*jetStream\)|server\.\(\*raft\)|server\.\(\*stream\)|server\.\(\*Server\)\.(Shutdown|shutdownJetStream|WaitForShutdown)`)

// sigtermWithin sends p SIGTERM and waits up to bound for it to exit. It
// returns how long the exit took, or an error where the exit was not
// clean or did not come: then p gets SIGQUIT, its whole goroutine dump is
// saved to a file (named in the error, kept after the test) and the error
// holds its log and the goroutines in shutdownPackages. Safe from any
// goroutine.
func sigtermWithin(p *proc, bound time.Duration) (time.Duration, error) {
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, err
	}
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			return 0, fmt.Errorf("exit after SIGTERM: %v; its log from the first race report or panic on:\n%s", err, p.report())
		}
		if gave := p.logged(gaveUp); len(gave) > 0 {
			return 0, fmt.Errorf("%w: pid %d exited but gave up a stop step: %s\n%s", errHung, p.cmd.Process.Pid, strings.Join(gave, "\n"), p.saved())
		}
		return time.Since(start), nil
	case <-time.After(bound):
	}
	return 0, fmt.Errorf("%w: pid %d not exited %v after SIGTERM; %s", errHung, p.cmd.Process.Pid, bound, p.hungDump())
}

// hungDump stops p with SIGQUIT (the Go runtime prints every goroutine to
// stderr, which is p's log), saves the log to a file and returns where,
// with the log before the dump and the goroutines that say where the
// shutdown hangs.
func (p *proc) hungDump() string {
	_ = p.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
	}
	return p.saved()
}

// gaveUp matches the gateway's log lines of a shutdown that gave up a step
// or the whole wait (stopbound.go).
var gaveUp = regexp.MustCompile(`shutdown step gave up|shutdown not finished`)

// saved saves p's whole log (with any goroutine dump) to a file and
// returns where, with the log's last lines and the dump's goroutines (or
// grouped stacks' lines) in shutdownPackages.
func (p *proc) saved() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	file := filepath.Join(os.TempDir(), fmt.Sprintf("rankwire-hung-%d-%d.log", p.cmd.Process.Pid, time.Now().Unix()))
	if err := os.WriteFile(file, []byte(strings.Join(p.log, "\n")), 0o644); err != nil {
		file = "(not saved: " + err.Error() + ")"
	}
	log, stacks := splitDump(p.log)
	// The gateway's own dump is pprof's grouped form, in the log: its
	// frames' lines.
	frames := goroutinesIn(log, shutdownPackages)
	return fmt.Sprintf("whole log and dump in %s; the log's last lines:\n%s\n\nits goroutines in the gateway and JetStream (of %d):\n%s",
		file, strings.Join(log[max(0, len(log)-60):], "\n"), len(stacks), strings.Join(append(frames, goroutinesIn(stacks, shutdownPackages)...), "\n\n"))
}

// TestWholeClusterStop stops all three nodes of a cluster together, with
// SIGTERM at once, after writes through each: no replica can take a
// leadership over and no peer answers the bucket's snapshot writes, yet
// every node exits cleanly within 5 s of its SIGTERM (issue 25; the
// times are logged).
func TestWholeClusterStop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes")
	}
	c := startSettledCluster(t)
	for i, n := range c.nodes {
		await.For(t, 30*time.Second, func() error {
			body := fmt.Sprintf(`{"id":"s%d","member":"m%d","score":%d}`, i, i, i)
			if status, err := call("POST", n.p.url("/v1/boards/b/scores"), c.tok, body, nil); status != 200 {
				return fmt.Errorf("submit through node %d: %d %v", i+1, status, err)
			}
			return nil
		})
	}
	stopAllWithin(t, c.nodes, 5*time.Second)
}
