package streamfollow

import (
	"testing"
	"time"
)

// The watchdog calls a fetcher stalled only when, for stallAfter, it has
// waited in Next and a stored sequence beyond the fetched one has been
// known: an idle replica told of a write a moment ago is not stalled.
func TestFollowerStalled(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name            string
		fetched, stored uint64
		waiting         time.Duration // how long it has waited; 0: not waiting
		behind          time.Duration // how long it has been behind
		want            bool
	}{
		{"caught up and idle", 7, 7, time.Minute, time.Minute, false},
		{"behind, waiting long", 7, 9, 2 * stallAfter, 2 * stallAfter, true},
		{"behind, waiting briefly", 7, 9, stallAfter / 2, 2 * stallAfter, false},
		{"behind, busy handing on", 7, 9, 0, 2 * stallAfter, false},
		{"idle, told of a write a moment ago", 7, 9, time.Minute, stallAfter / 10, false},
		{"nothing stored by this node", 7, 0, time.Minute, time.Minute, false},
	}
	for _, tt := range tests {
		var f Position
		f.fetched.Store(tt.fetched)
		f.NoteStored(tt.stored)
		f.NoteStored(tt.stored / 2) // an older ack never lowers it
		f.behind.Store(now.Add(-tt.behind).UnixNano())
		if tt.waiting > 0 {
			f.waiting.Store(now.Add(-tt.waiting).UnixNano())
		}
		if got := f.stalled(now); got != tt.want {
			t.Errorf("%s: stalled = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A replica falls behind when a caught-up one learns of a stored sequence
// past it; learning of more while already behind keeps the time it fell
// behind (a silent consumer on a busy stream still stalls).
func TestFollowerBehindSince(t *testing.T) {
	var f Position
	f.fetched.Store(7)
	f.NoteStored(7)
	if f.behind.Load() != 0 {
		t.Fatal("caught up, yet behind")
	}
	f.NoteStored(9)
	first := f.behind.Load()
	if first == 0 {
		t.Fatal("told of 9 at 7, yet not behind")
	}
	f.behind.Store(1)
	f.NoteStored(12)
	if f.behind.Load() != 1 {
		t.Fatal("told of more while behind: the time it fell behind moved")
	}
	f.fetched.Store(12)
	f.NoteStored(13)
	if f.behind.Load() == 1 {
		t.Fatal("caught up, then told of more: not behind from then")
	}
}
