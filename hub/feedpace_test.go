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

// heldFeed is a Feed whose first Flush waits until release is closed: a
// drain under way for as long as the test says. It counts the changes
// each drain carried.
type heldFeed struct {
	release chan struct{}

	mu      sync.Mutex
	applied int   // changes applied in the drain under way
	drains  []int // the changes of each drain, noted as its Flush starts
}

func (f *heldFeed) Apply(b FeedBatch, _ Window) {
	f.mu.Lock()
	f.applied += len(b.Changes)
	f.mu.Unlock()
}

func (f *heldFeed) Flush() {
	f.mu.Lock()
	f.drains = append(f.drains, f.applied)
	f.applied = 0
	first := len(f.drains) == 1
	f.mu.Unlock()
	if first {
		<-f.release
	}
}

func (f *heldFeed) seen() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.drains...)
}

// TestFeedCoalescesWhileBusy: changes that arrive while a drain is under
// way (its Flush held until the test lets it go, so however slow the
// machine) wait for one drain together: 40 changes acknowledged meanwhile
// are all carried by the next drain, not one drain each.
func TestFeedCoalescesWhileBusy(t *testing.T) {
	h := startHub(t, Config{PushInterval: time.Second})
	f := &heldFeed{release: make(chan struct{})}
	var once sync.Once
	let := func() { once.Do(func() { close(f.release) }) }
	t.Cleanup(let) // before the hub closes: its feed goroutine may be held
	h.SetFeed(f)
	mustPut(t, h, "t1", "b", Settings{})
	mustSubmit(t, h, "t1", "b", Item{Member: "first", Score: 1})
	checkFor(t, 10*time.Second, func() error {
		if d := f.seen(); len(d) != 1 {
			return fmt.Errorf("%d drains flushing, want the first, held", len(d))
		}
		return nil
	})
	const n = 40
	var wg sync.WaitGroup
	for w := range 4 { // each acknowledged once applied here: pending in the feed
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
	let()
	checkFor(t, 10*time.Second, func() error {
		if d := f.seen(); len(d) < 2 {
			return fmt.Errorf("drains %v, want a second", d)
		}
		return nil
	})
	if d := f.seen(); len(d) != 2 || d[0] != 1 || d[1] != n {
		t.Fatalf("drains carried %v changes, want [1 %d]: the changes that arrived while the first was under way, in one", d, n)
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
// change applied meanwhile for that long). A starved machine may delay
// the next drain's start by itself: the test waits for one pair of drains
// in which it started under 60 ms after the first ended, which the rule
// before never gives (a pause is a sleep, never shorter than asked).
func TestFeedPauseCountsTheWait(t *testing.T) {
	const busy, wait = 100 * time.Millisecond, 300 * time.Millisecond
	f := &busyFeed{busy: busy, wait: wait}
	h := startHub(t, Config{PushInterval: 3 * time.Second})
	h.SetFeed(f)
	mustPut(t, h, "t1", "b", Settings{})
	var gaps []time.Duration
	checkFor(t, 20*time.Second, func() error {
		first, gap := drainAfterDrainOn(t, h, f, len(gaps))
		gaps = append(gaps, gap)
		if gap >= busy*6/10 {
			return fmt.Errorf("the drains after one busy %v of its %v started %v after it ended, want under %v", busy, first, gaps, busy*6/10)
		}
		return nil
	})
}

// drainAfterDrain runs f as a hub's feed through two drains
// (drainAfterDrainOn) and returns the first drain's wall time and the gap
// from its end to the second's start.
func drainAfterDrain(t *testing.T, f *busyFeed) (first, gap time.Duration) {
	t.Helper()
	h := startHub(t, Config{PushInterval: 3 * time.Second})
	h.SetFeed(f)
	mustPut(t, h, "t1", "b", Settings{})
	return drainAfterDrainOn(t, h, f, 0)
}

// drainAfterDrainOn runs two more drains through f, h's feed, after the
// k pairs before: the second change is submitted once the first drain has
// taken its own (Apply ran), so that it is pending when that drain ends
// whatever the submission's fsync costs. It returns the first drain's
// wall time and the gap from its end to the second's start.
func drainAfterDrainOn(t *testing.T, h *Hub, f *busyFeed, k int) (first, gap time.Duration) {
	t.Helper()
	mustSubmit(t, h, "t1", "b", Item{Member: fmt.Sprint("p", 2*k), Score: 1})
	awaitFeed(t, f, func(changes, flushes int) bool { return changes == 2*k+1 })
	mustSubmit(t, h, "t1", "b", Item{Member: fmt.Sprint("p", 2*k+1), Score: 2})
	awaitFeed(t, f, func(changes, flushes int) bool { return flushes == 2*k+2 })
	_, fl := f.seen()
	return fl[2*k][1].Sub(fl[2*k][0]), fl[2*k+1][0].Sub(fl[2*k][1])
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
