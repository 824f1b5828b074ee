package ledger

import (
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/tzdb"
)

// BenchmarkKeyAt times the window key of a submission's time, which apply
// computes once per group and kept kind (not per item), in UTC and in a
// zone with daylight saving.
//
//	go test ./internal/ledger -run '^$' -bench KeyAt
func BenchmarkKeyAt(b *testing.B) {
	malta, err := tzdb.Load("Europe/Malta")
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC).UnixMilli()
	for _, c := range []struct {
		name string
		cal  calendar
	}{{"UTC", utcCalendar}, {"Europe_Malta", calendar{loc: malta, week: time.Sunday}}} {
		for _, k := range []kind{kindDay, kindWeek, kindMonth} {
			b.Run(c.name+"/"+k.String(), func(b *testing.B) {
				b.ReportAllocs()
				for i := range b.N {
					c.cal.keyAt(k, at+int64(i%86_400_000))
				}
			})
		}
	}
}
