package faults

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestDescribeGaps(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	events := []nodeEvent{{at(0), "n1", "SIGTERM"}, {at(1500), "n1", "exited"}, {at(1500), "n1", "started"},
		{at(3000), "n1", "ready"}, {at(3000), "n2", "SIGTERM"}, {at(3300), "n2", "exited"}}
	gaps := []gapTrace{
		{writer: "w0", from: at(3100), to: at(3150)}, // under the bound: left out
		{writer: "w1", from: at(3200), to: at(3450), reqs: []tracedReq{
			{start: at(3210), end: at(3440), host: "n3:8080", outcome: "200 OK"},
			{start: at(3300), host: "n2:8080"}}},
		{writer: "w2", from: at(1600), to: at(1720)},
		{writer: "w3", from: at(3250), to: at(3500)}, // overlaps w1's: one episode
	}
	stalls := []span{{at(3300), at(3350)}, {at(4000), at(4100)}}
	got := describeGaps(events, gaps, stalls)
	want := []string{
		"timeline (s): n1 SIGTERM 0.000, n1 exited 1.500, n1 started 1.500, n1 ready 3.000, n2 SIGTERM 3.000, n2 exited 3.300",
		"gap 120ms (1 writers' gaps over 100ms, w2's longest) from 1.600 to 1.720 (12:00:01.600 UTC); began 100ms after n1 started; the suite stalled 0s meanwhile",
		"gap 250ms (2 writers' gaps over 100ms, w1's longest) from 3.200 to 3.500 (12:00:03.200 UTC); began 200ms after n1 ready, 200ms after n2 SIGTERM; during it n2 exited 100ms into it; the suite stalled 50ms meanwhile",
		"  3.210..3.440 n3:8080: 200 OK",
		"  3.300..in flight n2:8080: ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("describeGaps:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := describeGaps(events, gaps[:1], stalls); got != nil {
		t.Errorf("describeGaps of gaps under %v = %q, want none", traceSlowest, got)
	}
}

func TestReqTraceCut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	rt := &reqTrace{next: http.DefaultTransport}
	hc := &http.Client{Transport: rt}
	from := time.Now()
	for range 2 {
		resp, err := hc.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	to := time.Now()
	got := rt.cut(from, to)
	if len(got) != 2 || got[0].outcome != "503 Service Unavailable" || got[1].end.Before(got[1].start) {
		t.Fatalf("cut = %+v, want the two 503s", got)
	}
	if again := rt.cut(to, time.Now()); len(again) != 0 {
		t.Errorf("a second cut returned %d requests that ended before its start, want 0", len(again))
	}
	var nilTrace *reqTrace
	if got := nilTrace.cut(from, to); got != nil {
		t.Errorf("a nil trace's cut = %v", got)
	}
}

func TestGapDuring(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	l := &Load{start: at(0), writers: []*writer{
		{acks: []time.Time{at(500), at(600), at(1100), at(1150), at(3000), at(3050)}}, // 1.15 to 3 s: began during the fault, counted whole
		{acks: []time.Time{at(700), at(1000), at(1180)}},
	}}
	events := []nodeEvent{{at(1000), "n1", "SIGTERM"}, {at(2000), "n1", "ready"}}
	if got := l.gapDuring(events); got != 1850*time.Millisecond {
		t.Errorf("gapDuring = %v, want 1.85s (from 1.15 s, before the last event, to 3 s)", got)
	}
	events = []nodeEvent{{at(1050), "n1", "SIGTERM"}, {at(1060), "n1", "exited"}}
	if got := l.gapDuring(events); got != 500*time.Millisecond {
		t.Errorf("gapDuring = %v, want 500ms (600 to 1100 ms)", got)
	}
	if got := l.gapDuring(nil); got != 0 {
		t.Errorf("gapDuring without events = %v, want 0", got)
	}
}
