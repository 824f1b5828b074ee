package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestIdleAndSlowConnectionsCannotLockOut: the gateway runs with 1,024
// file descriptors (prlimit; Go raises the soft limit to the hard one, so
// both are set). 1,100 connections that send nothing and 200 that send
// their headers a byte at a time are held open, more than the gateway has
// descriptors for; an authenticated read is still served within 3 s, each
// time, and the gateway never runs out of descriptors.
func TestIdleAndSlowConnectionsCannotLockOut(t *testing.T) {
	const prlimit = "/usr/bin/prlimit"
	if _, err := os.Stat(prlimit); err != nil {
		t.Skip("needs", prlimit)
	}
	if testing.Short() {
		t.Skip("opens 1,300 connections")
	}
	keys, sk := keyFile(t)
	p := startGatewayCmd(t, []string{prlimit, "--nofile=1024:1024", builtGateway(t)}, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir())
	if got := p.logged(regexp.MustCompile(`connection_budget=896\b`)); len(got) != 1 {
		t.Fatalf("the ready line does not show a budget of 896 at 1,024 descriptors: %v", p.logged(readyLine))
	}
	tok := adminToken(t, sk)
	if status, err := call("PUT", p.url("/v1/boards/b"), tok, "{}", nil); status != 200 {
		t.Fatalf("PUT board: %d %v", status, err)
	}
	if status, err := call("POST", p.url("/v1/boards/b/scores"), tok, `{"member":"p1","score":1}`, nil); status != 200 {
		t.Fatalf("submit: %d %v", status, err)
	}

	var idle, slow []net.Conn
	t.Cleanup(func() {
		for _, c := range append(idle, slow...) {
			c.Close()
		}
	})
	for range 1100 {
		c, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial after %d idle connections: %v", len(idle), err)
		}
		idle = append(idle, c)
	}
	for i := range 200 {
		c, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial after %d slow connections: %v", len(slow), err)
		}
		fmt.Fprintf(c, "GET /v1/boards/b/top HTTP/1.1\r\nHost: x\r\nX-Slow-%d: ", i)
		slow = append(slow, c)
	}
	stop := make(chan struct{})
	dripped := make(chan struct{})
	go func() { // one more header byte on each slow connection every 200 ms
		defer close(dripped)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				for _, c := range slow {
					c.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
					c.Write([]byte("a"))
				}
			}
		}
	}()
	defer func() { close(stop); <-dripped }()

	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 5 {
		req, _ := http.NewRequest("GET", p.url("/v1/boards/b/top"), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("read %d with 1,300 idle and slow connections open: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"p1"`) || took > 3*time.Second {
			t.Fatalf("read %d: %d after %v: %s", i, resp.StatusCode, took, body)
		}
		t.Logf("read %d served in %v", i, took.Round(time.Millisecond))
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid))
	t.Logf("gateway holds %d descriptors of 1,024", len(fds))
	awaitMetric(t, sideAddr(t, p, "--metrics-addr"), "rankwire_http_connections_evicted_total", 300)
	if got := p.logged(regexp.MustCompile(`too many open files`)); len(got) > 0 {
		t.Fatalf("the gateway ran out of descriptors: %v", got[0])
	}
	if got := p.logged(regexp.MustCompile(`connection budget full`)); len(got) == 0 {
		t.Error("no warning logged for the evictions")
	}
}
