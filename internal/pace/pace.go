// Package pace paces a loop that drains gathered work (the hub's change
// feed): a drain starts at once when the loop is idle, and under load the
// pause after a drain is as long as the drain was busy, at least MinGap
// and no later than the drain's start plus the loop's interval, so that
// the loop never spins, its work gets at most about half the time, and
// work waits at most about one interval plus one drain.
//
// It imports the standard library only.
package pace

import (
	"context"
	"time"
)

// MinGap is the least time between the end of one drain and the start of
// the next, however light the load: a burst of single changes is
// coalesced into drains at most this often.
const MinGap = time.Millisecond

// Next is when the drain after one that ran from start to end may start:
// after a pause as long as the drain was busy, at least MinGap, and no
// later than start+interval unless the drain itself ran past it.
func Next(start, end time.Time, interval time.Duration) time.Time {
	gap := max(end.Sub(start), MinGap)
	next := end.Add(gap)
	if limit := start.Add(interval); next.After(limit) {
		next = end.Add(MinGap)
		if limit.After(next) {
			next = limit
		}
	}
	return next
}

// SleepUntil waits until t (at once if t is past); false if ctx ended.
func SleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}
