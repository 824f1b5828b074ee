package security

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoMetricsOnAPIPort: /metrics and the debug paths on the API port
// answer 404 (or 401) with or without a token, and name no tenant, board
// or metric.
func TestNoMetricsOnAPIPort(t *testing.T) {
	tokens := map[string]string{"no token": "", "admin A": tokA(t, base(tenantA, "admin")), "read B": tokB(t, base(tenantB, "read"))}
	for _, path := range []string{"/metrics", "/metrics/", "/v1/metrics", "/debug/pprof/", "/debug/vars", "/v1/../metrics"} {
		for name, tok := range tokens {
			r := do(t, "GET", path, tok, "")
			if r.status != 404 && r.status != 401 {
				t.Errorf("GET %s with %s: %d, want 404 or 401", path, name, r.status)
			}
			var leaks []string
			for _, leak := range []string{"rankwire_", "go_goroutines", tenantA, tenantB, "poker-final", "zebra-vault"} {
				if strings.Contains(r.body, leak) {
					leaks = append(leaks, leak)
				}
			}
			if len(leaks) > 0 {
				t.Errorf("GET %s with %s: answer holds %q", path, name, leaks)
			}
		}
	}
}

// TestUnauthenticatedPathsNameNoTenant: what the API port answers without
// a token (/healthz, /readyz, the widget, unknown paths) names no tenant,
// board or member.
func TestUnauthenticatedPathsNameNoTenant(t *testing.T) {
	for _, path := range []string{"/healthz", "/readyz", "/", "/widget/", "/v1", "/v1/boards", "/v1/boards/poker-final/top", "/v1/ws", "/demo/token", "/demo/stats"} {
		r := do(t, "GET", path, "", "")
		if strings.HasPrefix(path, "/v1/boards") && r.status != 401 {
			t.Errorf("GET %s without a token: %d, want 401", path, r.status)
		}
		for _, leak := range []string{tenantA, tenantB, "poker-final", "zebra-vault", "champion", "zq-"} {
			if strings.Contains(strings.ReplaceAll(r.body, path, ""), leak) {
				t.Errorf("GET %s without a token: answer holds %q: %.200s", path, leak, r.body)
			}
		}
	}
}

// TestOnlyAPIAndMetricsListen lists the gateway process's listening
// sockets from /proc (TCP and UDP, IPv4 and IPv6, and Unix stream
// sockets) and proves that there are exactly two, both on loopback: the
// API's and the metrics listener's, which answers /metrics. The embedded
// NATS server listens on no port.
func TestOnlyAPIAndMetricsListen(t *testing.T) {
	if _, err := os.Stat("/proc/self/net/tcp"); err != nil {
		t.Skip("no /proc: not Linux")
	}
	inodes := socketInodes(t, gw.pid)
	var listening []string
	for _, f := range []string{"tcp", "tcp6", "udp", "udp6"} {
		listening = append(listening, inetListeners(t, gw.pid, f, inodes)...)
	}
	unix := unixListeners(t, gw.pid, inodes)
	if len(unix) > 0 {
		t.Errorf("Unix sockets listening: %v", unix)
	}
	var others []string
	for _, l := range listening {
		if l != "tcp "+gw.addr {
			others = append(others, l)
		}
	}
	t.Logf("listening: %v", listening)
	if len(others) != 1 {
		t.Fatalf("want the API (%s) and one metrics listener; other listeners: %v", gw.addr, others)
	}
	addr := strings.TrimPrefix(others[0], "tcp ")
	if host, _, _ := net.SplitHostPort(addr); !net.ParseIP(host).IsLoopback() {
		t.Errorf("metrics listener %s is not on loopback", addr)
	}
	r, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("the other listener %s: %v", addr, err)
	}
	defer r.Body.Close()
	if b, _ := bufio.NewReaderSize(r.Body, 1<<16).Peek(1 << 16); r.StatusCode != 200 || !strings.Contains(string(b), "rankwire_") {
		t.Errorf("the other listener %s is not the metrics listener: %d %.200s", addr, r.StatusCode, b)
	}
}

// socketInodes returns the inodes of the sockets pid holds open.
func socketInodes(t *testing.T, pid int) map[string]bool {
	t.Helper()
	fds, err := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	if err != nil || len(fds) == 0 {
		t.Fatalf("listing the gateway's descriptors: %v (%d)", err, len(fds))
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	return inodes
}

// inetListeners returns "tcp host:port" for each socket of pid in
// /proc/pid/net/<file> that listens (TCP state 0A) or is bound (UDP).
func inetListeners(t *testing.T, pid int, file string, inodes map[string]bool) []string {
	t.Helper()
	lines := procLines(t, fmt.Sprintf("/proc/%d/net/%s", pid, file))
	var out []string
	for _, f := range lines {
		if len(f) < 10 || !inodes[f[9]] {
			continue
		}
		if strings.HasPrefix(file, "tcp") && f[3] != "0A" {
			continue // not listening: a connection
		}
		if strings.HasPrefix(file, "udp") && f[2] != "00000000:0000" && !strings.HasSuffix(f[2], ":0000") {
			continue // connected UDP: a client socket
		}
		out = append(out, strings.TrimSuffix(file, "6")+" "+procAddr(t, f[1]))
	}
	return out
}

// unixListeners returns the paths of pid's listening Unix sockets
// (flags __SO_ACCEPTCON, state unconnected).
func unixListeners(t *testing.T, pid int, inodes map[string]bool) []string {
	t.Helper()
	var out []string
	for _, f := range procLines(t, fmt.Sprintf("/proc/%d/net/unix", pid)) {
		if len(f) >= 7 && inodes[f[6]] && f[3] == "00010000" {
			out = append(out, strings.Join(f[7:], " "))
		}
	}
	return out
}

// procLines reads a /proc table, header dropped, each line split in fields.
func procLines(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	var out [][]string
	for i, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); i > 0 && len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// procAddr decodes /proc/net's "0100007F:1F90": the address in host byte
// order (little endian on the machines we run on), in 32-bit words.
func procAddr(t *testing.T, s string) string {
	t.Helper()
	hexIP, hexPort, _ := strings.Cut(s, ":")
	raw, err := hex.DecodeString(hexIP)
	port, err2 := strconv.ParseUint(hexPort, 16, 16)
	if err != nil || err2 != nil || len(raw)%4 != 0 {
		t.Fatalf("address %q in /proc", s)
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	return net.JoinHostPort(net.IP(raw).String(), strconv.Itoa(int(port)))
}
