package loadtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRequestsSpreadOverGateways: with several base URLs (spaces and a
// trailing slash allowed), requests go to each gateway in turn.
func TestRequestsSpreadOverGateways(t *testing.T) {
	var hits [2]atomic.Int64
	var urls []string
	for i := range hits {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			hits[i].Add(1)
			w.Write([]byte(`{"seq":0,"total":0,"rows":[]}`))
		}))
		t.Cleanup(srv.Close)
		urls = append(urls, " "+srv.URL+"/ ")
	}
	c, err := newClient(Target{URL: strings.Join(urls, ",")}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	for range 10 {
		if _, err := c.read(context.Background(), "top", ""); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := hits[0].Load(), hits[1].Load(); a != 5 || b != 5 {
		t.Errorf("requests %d and %d, want 5 and 5", a, b)
	}
}

// TestBaseURLsRefused: a list with a host off loopback, or no URL at all,
// is refused before any request.
func TestBaseURLsRefused(t *testing.T) {
	for _, u := range []string{"", " , ", "http://127.0.0.1:1,http://10.0.0.1:8080", "http://127.0.0.1:1,ws://127.0.0.1:2"} {
		if _, err := (Target{URL: u}).baseURLs(); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
}

// TestFanoutWorkersGetEveryGateway: a fan-out over several gateways hands
// every worker all of their WebSocket URLs, which its connections take in
// turn.
func TestFanoutWorkersGetEveryGateway(t *testing.T) {
	c := FanoutConfig{Target: Target{URL: "http://127.0.0.1:8080,http://127.0.0.1:8081"}, Subscribers: 10, PerConn: 1, PerWorker: 5}.withDefaults()
	wcs, err := c.workerConfigs()
	if err != nil {
		t.Fatal(err)
	}
	for _, wc := range wcs {
		if wc.URL != "http://127.0.0.1:8080,http://127.0.0.1:8081" {
			t.Errorf("worker URL %q", wc.URL)
		}
	}
}
