package live

import (
	"fmt"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/rankwire/rankwire/hub"
)

// TestPushAtIdle: with a push interval of 2 s, a change at idle reaches a
// watcher over a real WebSocket well within half of it, three times in a
// row (a fixed tick made each wait for the next tick: up to the whole
// interval). A functional property, not a timing benchmark.
func TestPushAtIdle(t *testing.T) {
	const interval = 2 * time.Second
	e := newEnvPush(t, Options{}, nil, interval)
	e.putBoard("a", "weekly", hub.Settings{})
	c := e.dial("access_token="+e.token("a", admin), true, nil)
	c.Subscribe("s1", "weekly", map[string]any{"kind": "top", "limit": 10})
	checkFor(t, 10*time.Second, func() error {
		if _, ok := c.Rows("s1"); !ok {
			return fmt.Errorf("no snapshot")
		}
		return nil
	})
	for i := range 3 {
		start := time.Now()
		e.submit("a", "weekly", hub.Item{Member: fmt.Sprint("p", i), Score: float64(100 - i)})
		checkFor(t, 10*time.Second, func() error {
			if rows, _ := c.Rows("s1"); len(rows) != i+1 {
				return fmt.Errorf("%d rows, want %d", len(rows), i+1)
			}
			return nil
		})
		if d := time.Since(start); d >= interval/2 {
			t.Fatalf("change %d reached the watcher after %v, want under %v", i, d, interval/2)
		}
	}
}

// TestPushBurstBounded: a burst of concurrent submissions reaches every
// watcher as a chain of diffs (each diff's prev is the last seq: the
// client helper checks) ending in the latest state, with at most one
// message per watcher per drain of the feed: the number of messages
// follows the drains, not the changes.
func TestPushBurstBounded(t *testing.T) {
	e := newEnvPush(t, Options{}, nil, 200*time.Millisecond)
	e.putBoard("a", "weekly", hub.Settings{})
	var watchers []*wsClient
	for range 3 {
		c := e.dial("access_token="+e.token("a", admin), true, nil)
		c.Subscribe("s1", "weekly", map[string]any{"kind": "top", "limit": 100})
		watchers = append(watchers, c)
	}
	for _, c := range watchers {
		checkFor(t, 10*time.Second, func() error {
			if _, ok := c.Rows("s1"); !ok {
				return fmt.Errorf("no snapshot")
			}
			return nil
		})
	}
	before := drains(t, e)
	const writers, each = 8, 12
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				e.submit("a", "weekly", hub.Item{Member: fmt.Sprint("p", w, "-", i), Score: float64(w*each + i)})
			}
		})
	}
	wg.Wait()
	for _, c := range watchers {
		checkFor(t, 10*time.Second, func() error {
			if rows, _ := c.Rows("s1"); len(rows) != writers*each || rows[1].Score != float64(writers*each-1) {
				return fmt.Errorf("%d rows, top %+v; want %d, top score %d", len(rows), rows[1], writers*each, writers*each-1)
			}
			return nil
		})
	}
	n := drains(t, e) - before
	for i, c := range watchers {
		got := 0
		for _, m := range c.Messages() {
			if m.Type == "diff" {
				got++
			}
		}
		if got > n || got < 1 {
			t.Errorf("watcher %d: %d diffs for %d drains and %d changes", i, got, n, writers*each)
		}
		t.Logf("watcher %d: %d diffs for %d drains and %d changes", i, got, n, writers*each)
	}
}

// drains is how many times the plane's feed has flushed.
func drains(t *testing.T, e *env) int {
	t.Helper()
	var m dto.Metric
	if err := e.p.metrics.tick.Write(&m); err != nil {
		t.Fatal(err)
	}
	return int(m.GetHistogram().GetSampleCount())
}
