package hub

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"
)

// spinCPU computes until the process has used d more CPU time (user and
// system, every thread): busy for d as pace counts it, however loaded
// the machine.
func spinCPU(d time.Duration) {
	var ru syscall.Rusage
	cpu := func() time.Duration {
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for from := cpu(); cpu()-from < d; {
	}
}

// busyFeed is a Feed whose every Flush computes for busy of the process's
// CPU (an engine at work), then waits for wait (writers the machine has
// not scheduled yet). It records when each Flush ran and how many changes
// the drains carried.
type busyFeed struct {
	busy, wait time.Duration

	mu      sync.Mutex
	changes int
	flushes [][2]time.Time // start and end of each Flush
}

func (f *busyFeed) Apply(b FeedBatch, _ Window) {
	f.mu.Lock()
	f.changes += len(b.Changes)
	f.mu.Unlock()
}

func (f *busyFeed) Flush() {
	start := time.Now()
	spinCPU(f.busy) // the engine's work: the pause after it is what is tested
	time.Sleep(f.wait)
	f.mu.Lock()
	f.flushes = append(f.flushes, [2]time.Time{start, time.Now()})
	f.mu.Unlock()
}

func (f *busyFeed) seen() (changes int, flushes [][2]time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changes, append([][2]time.Time(nil), f.flushes...)
}

// TestFeedDrainsAtOnceWhenIdle: with a push interval of 2 s, a change at
// idle reaches the Feed well within half of it (the fixed tick made it
// wait for the next tick: up to the whole interval).
func TestFeedDrainsAtOnceWhenIdle(t *testing.T) {
	const interval = 2 * time.Second
	h := startHub(t, Config{PushInterval: interval})
	f := &busyFeed{}
	h.SetFeed(f)
	mustPut(t, h, "t1", "b", Settings{})
	for i := range 3 { // three in a row: a fixed tick would need at least 2 intervals
		start := time.Now()
		mustSubmit(t, h, "t1", "b", Item{Member: fmt.Sprint("p", i), Score: float64(i)})
		checkFor(t, 10*time.Second, func() error {
			if n, _ := f.seen(); n != i+1 {
				return fmt.Errorf("%d changes drained, want %d", n, i+1)
			}
			return nil
		})
		if d := time.Since(start); d >= interval/2 {
			t.Fatalf("change %d reached the feed after %v, want under %v", i, d, interval/2)
		}
	}
}

// TestFeedCoalescesWhileBusy: while each Flush computes for 30 ms, changes
// that arrive meanwhile wait for one drain together, and the next drain
// starts no sooner than the pause that makes the drain and its pause at
// most half busy (30 ms after it on an idle machine, where the Flush took
// 30 ms of wall time too): the loop never spins and the drains stay fewer
// than the changes.
func TestFeedCoalescesWhileBusy(t *testing.T) {
	const busy = 30 * time.Millisecond
	h := startHub(t, Config{PushInterval: time.Second})
	f := &busyFeed{busy: busy}
	h.SetFeed(f)
	mustPut(t, h, "t1", "b", Settings{})
	const n = 40
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range n / 4 {
				if _, err := h.Submit(testCtx(t), "t1", "b", []Item{{Member: fmt.Sprint("p", w, "-", i), Score: float64(i)}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	checkFor(t, 10*time.Second, func() error {
		if got, _ := f.seen(); got != n {
			return fmt.Errorf("%d changes drained, want %d", got, n)
		}
		return nil
	})
	_, flushes := f.seen()
	if len(flushes) >= n {
		t.Fatalf("%d flushes for %d changes: nothing coalesced", len(flushes), n)
	}
	// The process's CPU clock (getrusage) may lag by a scheduler tick for
	// a thread running on the other core when it is read: a pause a few
	// milliseconds short of busy is that, not a loop that spins (MinGap).
	const tick = 5 * time.Millisecond
	for i := 1; i < len(flushes); i++ {
		wall := flushes[i-1][1].Sub(flushes[i-1][0])
		want := max(2*busy-wall-tick, 0)
		if gap := flushes[i][0].Sub(flushes[i-1][1]); gap < want {
			t.Fatalf("flush %d started %v after the previous ended (which computed %v in %v), want at least %v", i, gap, busy, wall, want)
		}
	}
}

// TestFeedPauseFollowsCPU: a Flush that waits a second without computing
// (writers the machine has not scheduled) is not followed by a pause as
// long: a change applied while it waits is drained well within half a
// second of its end, where pausing for the drain's wall time would have
// held it a second more. The change is submitted once the first drain has
// taken its own (Apply ran), so that it is pending when that drain ends
// whatever the submission's fsync costs.
func TestFeedPauseFollowsCPU(t *testing.T) {
	const wait = time.Second
	if _, gap := drainAfterDrain(t, &busyFeed{wait: wait}); gap >= wait/2 {
		t.Fatalf("the drain after a waiting one started %v after it ended, want under %v", gap, wait/2)
	}
}

// TestFeedPauseCountsTheWait: a Flush that computes for 100 ms and then
// waits 300 ms (writers the machine had not scheduled) was busy for a
// quarter of its wall time or less: it has rested enough, and the next
// drain starts within the least gap and the machine's wake-up, not 100 ms
// later (a pause as long as the drain was busy, the rule before, held a
// change applied meanwhile for that long).
func TestFeedPauseCountsTheWait(t *testing.T) {
	const busy, wait = 100 * time.Millisecond, 300 * time.Millisecond
	first, gap := drainAfterDrain(t, &busyFeed{busy: busy, wait: wait})
	if gap >= busy*6/10 {
		t.Fatalf("the drain after one busy %v of its %v started %v after it ended, want under %v", busy, first, gap, busy*6/10)
	}
}

// drainAfterDrain runs f as a hub's feed through two drains: the second
// change is submitted once the first drain has taken its own (Apply ran),
// so that it is pending when that drain ends whatever the submission's
// fsync costs. It returns the first drain's wall time and the gap from its
// end to the second's start.
func drainAfterDrain(t *testing.T, f *busyFeed) (first, gap time.Duration) {
	t.Helper()
	h := startHub(t, Config{PushInterval: 3 * time.Second})
	h.SetFeed(f)
	mustPut(t, h, "t1", "b", Settings{})
	mustSubmit(t, h, "t1", "b", Item{Member: "p0", Score: 1})
	awaitFeed(t, f, func(changes, flushes int) bool { return changes == 1 })
	mustSubmit(t, h, "t1", "b", Item{Member: "p1", Score: 2})
	awaitFeed(t, f, func(changes, flushes int) bool { return flushes == 2 })
	_, fl := f.seen()
	return fl[0][1].Sub(fl[0][0]), fl[1][0].Sub(fl[0][1])
}

// awaitFeed waits until ok holds for f's changes and flushes so far.
func awaitFeed(t *testing.T, f *busyFeed, ok func(changes, flushes int) bool) {
	t.Helper()
	checkFor(t, 10*time.Second, func() error {
		if n, fl := f.seen(); !ok(n, len(fl)) {
			return fmt.Errorf("%d changes, %d flushes so far", n, len(fl))
		}
		return nil
	})
}
