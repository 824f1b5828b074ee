package client

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// orderedClient is a Client of n gateways whose next call starts at
// first, with those of failed under penalty at now.
func orderedClient(t testing.TB, n, first int, failed []int, now time.Time) *Client {
	t.Helper()
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://127.0.0.1:%d", 1000+i)
	}
	c, err := New(urls, WithToken("t"))
	if err != nil {
		t.Fatal(err)
	}
	c.next.Store(uint32(first))
	for _, g := range failed {
		c.failedUntil[g].Store(now.Add(FailurePenalty).UnixNano())
	}
	return c
}

// TestOrder: a round tries the gateways from the one that answered last,
// around the list, those under penalty last in the same order.
func TestOrder(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name          string
		n, first      int
		failed, wants []int
	}{
		{"none failed", 5, 2, nil, []int{2, 3, 4, 0, 1}},
		{"two failed", 5, 2, []int{3, 0}, []int{2, 4, 1, 3, 0}},
		{"the first failed", 3, 1, []int{1}, []int{2, 0, 1}},
		{"all failed: the list's order", 4, 3, []int{0, 1, 2, 3}, []int{3, 0, 1, 2}},
		{"one gateway", 1, 0, []int{0}, []int{0}},
		{"ten gateways (more than run's stack buffer holds)", 10, 9, []int{9, 1}, []int{0, 2, 3, 4, 5, 6, 7, 8, 9, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := orderedClient(t, tc.n, tc.first, tc.failed, now)
			if got := c.order(now, make([]int, tc.n)); !slices.Equal(got, tc.wants) {
				t.Fatalf("order %v, want %v", got, tc.wants)
			}
			if got := c.order(now.Add(FailurePenalty+time.Nanosecond), make([]int, tc.n)); got[0] != tc.first {
				t.Fatalf("penalties over: order %v, want it to start at %d", got, tc.first)
			}
		})
	}
}

// TestOrderAllocatesNothing: a round's order is written into its call's
// buffer: no allocation per round (before: a new slice a round).
func TestOrderAllocatesNothing(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := orderedClient(t, 5, 2, []int{3, 0}, now)
	buf := make([]int, 5)
	if n := testing.AllocsPerRun(1000, func() { c.order(now, buf) }); n != 0 {
		t.Fatalf("%v allocations an order, want 0", n)
	}
}

// BenchmarkOrder: a round's order, against the one it replaced (a new
// slice a round, and a second one for the gateways under penalty where
// the compiler does not keep it on the stack).
func BenchmarkOrder(b *testing.B) {
	now := time.Unix(1_800_000_000, 0)
	for _, n := range []int{3, 5} {
		c := orderedClient(b, n, 1, []int{0}, now)
		b.Run(fmt.Sprintf("gateways=%d/buffer", n), func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]int, n)
			for b.Loop() {
				c.order(now, buf)
			}
		})
		b.Run(fmt.Sprintf("gateways=%d/slice-a-round", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				orderSliceARound(c, now)
			}
		})
	}
}

// orderSliceARound is order as it was before it took a buffer: the peer
// of BenchmarkOrder.
func orderSliceARound(c *Client, now time.Time) []int {
	first, t := int(c.next.Load()), now.UnixNano()
	out := make([]int, 0, len(c.urls))
	var failed []int
	for i := range c.urls {
		n := (first + i) % len(c.urls)
		if c.failedUntil[n].Load() > t {
			failed = append(failed, n)
		} else {
			out = append(out, n)
		}
	}
	return append(out, failed...)
}
