package ledger

import (
	"testing"
	"time"
)

func TestKeyAt(t *testing.T) {
	at := time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC) // a Wednesday
	cases := []struct {
		k    kind
		want time.Time
	}{
		{kindDay, time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)},
		{kindWeek, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)},
		{kindMonth, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		if got := keyAt(c.k, at.UnixMilli()); got.start != c.want.UnixMilli() {
			t.Errorf("%v: %v, want %v", c.k, time.UnixMilli(got.start).UTC(), c.want)
		}
	}
	sunday := time.Date(2026, 3, 8, 23, 0, 0, 0, time.UTC)
	if keyAt(kindWeek, sunday.UnixMilli()) != keyAt(kindWeek, at.UnixMilli()) {
		t.Error("Sunday is not in the ISO week of the Wednesday before")
	}
}
