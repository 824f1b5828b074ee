package faults

import (
	"strings"
	"testing"
	"time"
)

// Every node logs each election; the timeline gets each once, at its
// earliest line, within the fault's span only, and a re-election of the
// same leader (deposed in between) counts again.
func TestElectionsFromTheNodesLogs(t *testing.T) {
	n1 := `time=2026-11-27T15:45:35.536Z level=INFO msg="hub: stream leader elected" tenant=faults leader=n1
time=2026-11-27T15:45:38.938Z level=WARN msg="readiness: not ready" reason="cut"
time=2026-11-27T15:45:40.522Z level=INFO msg="hub: stream leader elected" tenant=faults leader=n1
time=2026-11-27T15:45:41.000Z level=INFO msg="hub: stream leader elected" tenant=faultsx leader=n2
time=2026-11-27T15:45:42.374Z level=INFO msg="hub: stream leader elected" tenant=faults leader=n3
`
	n3 := `time=2026-11-27T15:45:40.521Z level=INFO msg="hub: stream leader elected" tenant=faults leader=n1
time=2026-11-27T15:45:42.371Z level=INFO msg="hub: stream leader elected" tenant=faults leader=n3
time=2026-11-27T15:45:42.666Z level=INFO msg="hub: stream leader elected" tenant=faults leader=n1
`
	logs := [][]nodeEvent{parseElections(strings.NewReader(n1)), parseElections(strings.NewReader(n3))}
	if len(logs[0]) != 3 || len(logs[1]) != 3 {
		t.Fatalf("parsed %d and %d elections, want 3 and 3 (another tenant's not)", len(logs[0]), len(logs[1]))
	}
	from := time.Date(2026, 11, 27, 15, 45, 37, 600e6, time.UTC)
	got := mergeElections(logs, from, from.Add(6*time.Second))
	var names []string
	for _, e := range got {
		names = append(names, e.node+" "+e.what+" "+e.at.Format("05.000"))
	}
	want := "n1 elected 40.521, n3 elected 42.371, n1 elected 42.666"
	if s := strings.Join(names, ", "); s != want {
		t.Fatalf("elections %s, want %s", s, want)
	}
}
