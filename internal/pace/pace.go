// Package pace paces a loop that drains gathered work (the hub's change
// feed): a drain starts at once when the loop is idle, and under load the
// pause after a drain makes the drain and its pause at most half busy
// (as long as the drain where it was busy all through), at least MinGap
// and no later than the drain's start plus the loop's interval, so that
// the loop never spins, its work gets at most about half the time, and
// work waits at most about one interval plus one drain.
//
// Busy is the process's CPU time over the drain where that is less than
// its wall time (cpu.go): a drain the machine descheduled, or one that
// waited for writers who waited for a CPU, took long without the process
// being busy, and pausing as long again would double the delay its
// changes already had. A process busy on its own work (an overload) uses
// CPU all through a drain, and its pauses stay as long as its drains.
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

// Mark is a drain's start: the wall clock and the process's CPU time.
type Mark struct {
	wall time.Time
	cpu  time.Duration
	ok   bool // cpu was read: false where the platform has no process CPU clock
}

// Start marks the start of a drain. Cost: one getrusage(2).
func Start() Mark {
	cpu, ok := processCPU()
	return Mark{wall: time.Now(), cpu: cpu, ok: ok}
}

// Time is the wall-clock time of m.
func (m Mark) Time() time.Time { return m.wall }

// Busy is how long the drain that started at m and ended at end counts as
// busy: its wall time, or the process's CPU time since m where that is
// less. A drain no longer than MinGap reads no clock (its pause is MinGap
// whatever it counts).
func (m Mark) Busy(end time.Time) time.Duration {
	wall := end.Sub(m.wall)
	if wall <= MinGap || !m.ok {
		return wall
	}
	cpu, ok := processCPU()
	if !ok {
		return wall
	}
	return min(wall, cpu-m.cpu)
}

// Next is when the drain after one that ran from start to end, busy for
// busy (see Mark.Busy), may start: after a pause that makes the drain and
// the pause together at most half busy, i.e. twice busy less the drain's
// wall time, at least MinGap, and no later than start+interval unless
// the drain itself ran past it. A drain busy all through (an overload of
// the process's own) pauses as long as it ran, so its coalescing is what
// it was; one that was busy for half its wall time or less (descheduled
// by other processes, or waiting for writers that were) has rested
// enough already: pausing more would hold the changes applied meanwhile
// for nothing (docs/BENCHMARKS.md, "Shape 1: where the time from
// acknowledgement to receipt goes").
func Next(start, end time.Time, busy, interval time.Duration) time.Time {
	gap := max(2*busy-end.Sub(start), MinGap)
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
