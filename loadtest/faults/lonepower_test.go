package faults

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
)

// The child process of TestLonePowerLoss: a Hub on the directory in
// loneEnv, under the sync policy in loneSyncEnv, with writers that print
// every acknowledged submission.
const (
	loneEnv     = "RW_LONE_POWER_DIR"
	loneSyncEnv = "RW_LONE_POWER_SYNC"
)

// TestLonePowerLoss cuts the power of a lone node (no cluster, where the
// fault suite's power-loss-all does not reach) under --sync always: a
// child process runs a Hub on the lazy FUSE filesystem with 16 writers, is
// killed with SIGKILL while they write, every write not fsynced is
// dropped, and a Hub started on what remains must hold every submission
// the child had acknowledged. The same with --sync lazy must lose some:
// the check can fail. It needs root and /dev/fuse (skipped without them,
// failed under CI=true). docs/BENCHMARKS.md, "Group fsync outside the
// store on one node".
func TestLonePowerLoss(t *testing.T) {
	if dir := os.Getenv(loneEnv); dir != "" {
		loneChild(dir, os.Getenv(loneSyncEnv))
		return
	}
	needFUSE(t)
	for _, policy := range []string{"always", "lazy"} {
		t.Run(policy, func(t *testing.T) {
			acked, undone, missing := lonePowerRun(t, policy)
			t.Logf("--sync %s: %d acknowledged, the power loss dropped %d bytes not fsynced, %d acknowledged missing after",
				policy, len(acked), undone, len(missing))
			if policy == "always" && len(missing) > 0 {
				t.Errorf("%d acknowledged submissions lost, e.g. %v", len(missing), missing[:min(5, len(missing))])
			}
			if policy == "lazy" && len(missing) == 0 {
				t.Errorf("--sync lazy lost nothing acknowledged: the power loss did not drop unsynced writes")
			}
		})
	}
}

// needFUSE skips t without root or /dev/fuse or a mount, and fails it
// instead under CI=true.
func needFUSE(t *testing.T) {
	t.Helper()
	miss := t.Skipf
	if os.Getenv("CI") == "true" {
		miss = t.Fatalf
	}
	if os.Geteuid() != 0 {
		miss("mounting a FUSE filesystem needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		miss("no FUSE: %v", err)
	}
	dir := t.TempDir()
	lz, err := mountLazy(filepath.Join(dir, "b"), filepath.Join(dir, "m"))
	if err != nil {
		miss("cannot mount FUSE here: %v", err)
	}
	lz.unmount()
}

// loneAcks is how many acknowledgements the child gives before its power
// is cut: many fsync rounds.
const loneAcks = 3000

// lonePowerRun runs the child on a lazy mount, cuts its power after at
// least loneAcks acknowledgements, and returns what was acknowledged (member:
// score), the bytes the power loss dropped and the acknowledged members
// not found with their score by a Hub started on what remained.
func lonePowerRun(t *testing.T, policy string) (acked map[string]float64, undone int64, missing []string) {
	dir := t.TempDir()
	backing, mnt := filepath.Join(dir, "backing"), filepath.Join(dir, "mnt")
	lz, err := mountLazy(backing, mnt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lz.unmount() })
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLonePowerLoss$")
	cmd.Env = append(os.Environ(), loneEnv+"="+mnt, loneSyncEnv+"="+policy)
	logf, err := os.Create(filepath.Join(dir, "child.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stderr = logf // the child Hub's log
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked = map[string]float64{}
	enough := make(chan struct{})
	read := make(chan struct{})
	go func() { // ends at the child's exit: its stdout closes
		defer close(read)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			member, score, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "ACK "), " ")
			if v, err := strconv.ParseFloat(score, 64); ok && err == nil {
				acked[member] = v
				if len(acked) == loneAcks {
					close(enough)
				}
			}
		}
	}()
	select {
	case <-enough:
	case <-read:
	case <-time.After(90 * time.Second):
	}
	cmd.Process.Signal(syscall.SIGKILL) // the power goes while the writers write
	<-read
	cmd.Wait()
	if undone, err = lz.powerOff(); err != nil {
		t.Fatal(err)
	}
	if len(acked) < loneAcks { // the child failed, or wrote too slowly: its log says which
		b, _ := os.ReadFile(logf.Name())
		t.Fatalf("only %d acknowledged before the power loss; the child's log:\n%s", len(acked), b[max(0, len(b)-4000):])
	}
	return acked, undone, loneMissing(t, backing, acked)
}

// loneMissing starts a Hub on dir and returns the members of acked it
// does not hold with their score.
func loneMissing(t *testing.T, dir string, acked map[string]float64) []string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := hub.Start(ctx, hub.Config{DataDir: dir})
	if err != nil {
		t.Fatalf("start after the power loss: %v", err)
	}
	defer h.Close()
	var missing []string
	for m, score := range acked {
		p, err := h.Member(hub.Loc{Tenant: Tenant, Board: "b"}, m)
		if err != nil || len(p.Rows) != 1 || p.Rows[0].Score != score {
			missing = append(missing, m)
		}
	}
	return missing
}

// loneChild is the child: a Hub on dir and 16 writers, each submitting
// members of its own one at a time and printing each acknowledged one,
// until it is killed.
func loneChild(dir, policy string) {
	cfg := hub.Config{DataDir: dir, Sync: hub.SyncAlways}
	if policy == "lazy" {
		cfg.Sync = hub.SyncLazy
	}
	ctx := context.Background()
	h, err := hub.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: start:", err)
		os.Exit(2)
	}
	if _, err := h.PutBoard(ctx, Tenant, "b", hub.Settings{}); err != nil {
		fmt.Fprintln(os.Stderr, "child: board:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := 1; ; i++ {
				m := fmt.Sprintf("w%02d-%d", w, i)
				if _, err := h.Submit(ctx, Tenant, "b", []hub.Item{{Member: m, Score: float64(i)}}); err != nil {
					continue
				}
				mu.Lock()
				fmt.Printf("ACK %s %d\n", m, i)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
