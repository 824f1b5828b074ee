package skiptest

import (
	"strings"
	"testing"
)

// Missing skips its test and counts it by tool; the report has one line
// per tool, in first-seen order, with the noun's number.
func TestMissingReported(t *testing.T) {
	for _, c := range []struct{ what, why string }{
		{"browser", "chromium not found"}, {"node", "node not found"}, {"browser", "chromium not found"},
	} {
		t.Run(c.what, func(t *testing.T) {
			Missing(t, c.what, c.why)
			t.Error("Missing did not skip")
		})
	}
	var b strings.Builder
	report(&b, "web")
	want := "web: 2 browser tests skipped: chromium not found\nweb: 1 node test skipped: node not found\n"
	if b.String() != want {
		t.Fatalf("report %q, want %q", b.String(), want)
	}
}
