package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/logtest"
)

// listening returns the TCP sockets process pid listens on, as host:port:
// the LISTEN rows of /proc/<pid>/net/tcp and tcp6 whose inode is one of
// the process's descriptors (those files list the whole network namespace).
func listening(t *testing.T, pid int) []string {
	t.Helper()
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if ino, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	var out []string
	for _, file := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] { // 0A: LISTEN
				continue
			}
			out = append(out, procAddr(t, f[1]))
		}
	}
	slices.Sort(out)
	return out
}

// procAddr decodes /proc/net/tcp's "0100007F:1F90" (address bytes in host
// order, 32 bits at a time; port in hex) into "127.0.0.1:8080".
func procAddr(t *testing.T, s string) string {
	ipHex, portHex, _ := strings.Cut(s, ":")
	raw, err := hex.DecodeString(ipHex)
	port, err2 := strconv.ParseUint(portHex, 16, 16)
	if err != nil || err2 != nil || len(raw)%4 != 0 {
		t.Fatalf("bad /proc address %q", s)
	}
	for i := 0; i < len(raw); i += 4 { // little-endian words
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	return net.JoinHostPort(net.IP(raw).String(), strconv.FormatUint(port, 10))
}

var listeningLine = regexp.MustCompile(`msg=listening flag=(\S+) addr=(\S+)`)

// sideAddr returns the address the gateway logged for the listener of
// flag (--metrics-addr, --pprof).
func sideAddr(t *testing.T, p *proc, flag string) string {
	t.Helper()
	for _, l := range p.logged(listeningLine) {
		if m := listeningLine.FindStringSubmatch(l); m[1] == flag {
			return m[2]
		}
	}
	t.Fatalf("no listening line for %s", flag)
	return ""
}

// TestOnlyAPIAndMetricsListen: the real gateway binary, single-node with the embedded
// NATS server listens on the API and metrics addresses and on nothing
// else (no NATS port); with --pprof, on that one too.
func TestOnlyAPIAndMetricsListen(t *testing.T) {
	if _, err := os.Stat("/proc/self/net/tcp"); err != nil {
		t.Skip("needs Linux /proc")
	}
	keys, _ := keyFile(t)
	for _, withPprof := range []bool{false, true} {
		t.Run(fmt.Sprintf("pprof=%v", withPprof), func(t *testing.T) {
			env := []string{"RANKWIRE_KEYS=" + keys, "RANKWIRE_DATA=" + t.TempDir()}
			if withPprof {
				env = append(env, "RANKWIRE_PPROF=127.0.0.1:0")
			}
			p := startGatewayCmd(t, []string{builtGateway(t)}, env...)
			want := []string{p.addr, sideAddr(t, p, "--metrics-addr")}
			if withPprof {
				want = append(want, sideAddr(t, p, "--pprof"))
			}
			slices.Sort(want)
			if got := listening(t, p.cmd.Process.Pid); !slices.Equal(got, want) {
				t.Fatalf("the gateway listens on %v; want only %v", got, want)
			}
		})
	}
}

// TestMetricsOnlyOnMetricsListener: /metrics answers on --metrics-addr
// without a token and is 404 on the API port, with or without one.
func TestMetricsOnlyOnMetricsListener(t *testing.T) {
	keys, sk := keyFile(t)
	p := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir())
	tok := adminToken(t, sk)
	if status, err := call("PUT", p.url("/v1/boards/secret-board"), tok, "{}", nil); status != 200 {
		t.Fatalf("PUT board: %d %v", status, err)
	}
	for _, token := range []string{"", tok} {
		if status, err := call("GET", p.url("/metrics"), token, "", nil); status != 404 {
			t.Errorf("GET /metrics on the API port (token %v): %d %v", token != "", status, err)
		}
	}
	resp, err := http.Get("http://" + sideAddr(t, p, "--metrics-addr") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`rankwire_board_members{board="secret-board",tenant="t1"} 0`, "rankwire_http_connection_budget", "go_goroutines",
		`rankwire_quarantine_pending{tenant="t1"} 0`, `rankwire_snapshot_age_seconds{tenant="t1"} `, "\nrankwire_store_used_bytes ", "\nrankwire_store_limit_bytes "} {
		if resp.StatusCode != 200 || !bytes.Contains(body, []byte(want)) {
			t.Errorf("metrics listener: %d, lacks %s", resp.StatusCode, want)
		}
	}
}

// TestNoMetricsListener: an empty --metrics-addr opens none, and a taken
// one fails the start naming the flag.
func TestNoMetricsListener(t *testing.T) {
	var logs logtest.Buffer // the demo goes on logging while the test reads
	cfg := Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PushInterval: 100 * time.Millisecond}
	runUntilReady(t, cfg, &logs)
	if strings.Contains(logs.String(), "msg=listening") || !strings.Contains(logs.String(), "metrics_addr=none") {
		t.Fatalf("a listener besides the API with no --metrics-addr:\n%s", logs.String())
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg = Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), PushInterval: 100 * time.Millisecond, MetricsAddr: taken.Addr().String()}
	err = run(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Fatalf("metrics address taken: %v", err)
	}
}

// runUntilReady runs the gateway in-process with its log in logs until it
// is ready, and stops it at cleanup.
func runUntilReady(t *testing.T, cfg Config, logs io.Writer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, cfg, slog.New(slog.NewTextHandler(logs, nil)), io.Discard, ready) }()
	select {
	case <-ready:
	case err := <-errc:
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
}

// TestSecondGatewayOnSameData: a second gateway on a --data in use refuses
// to start, naming the first one's PID; once the first has gone, even by
// kill -9, a gateway starts on it again.
func TestSecondGatewayOnSameData(t *testing.T) {
	keys, sk := keyFile(t)
	data := t.TempDir()
	env := []string{"RANKWIRE_KEYS=" + keys, "RANKWIRE_DATA=" + data}
	first := startGateway(t, env...)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), append([]string{"RANKWIRE_TEST_AS_GATEWAY=1", "RANKWIRE_ADDR=127.0.0.1:0", "RANKWIRE_METRICS_ADDR=127.0.0.1:0"}, env...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("second gateway: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("a second gateway is running on the same --data:\n%s", stderr.String())
	}
	want := fmt.Sprintf("used by another gateway (pid %d", first.cmd.Process.Pid)
	if !strings.Contains(stderr.String(), want) {
		t.Fatalf("refusal does not name the holder: %s", stderr.String())
	}
	if status, err := call("GET", first.url("/v1/boards"), adminToken(t, sk), "", nil); status != 200 {
		t.Fatalf("the first gateway after the refused start: %d %v", status, err)
	}
	first.cmd.Process.Kill()
	<-first.done
	first.done <- nil // for the cleanup
	startGateway(t, env...)
	if _, err := os.Stat(filepath.Join(data, lockName)); err != nil {
		t.Fatal(err)
	}
}

// TestSameDataInProcess: two run calls on one --data: the second fails
// with errDataLocked.
func TestSameDataInProcess(t *testing.T) {
	data := t.TempDir()
	runUntilReady(t, Config{Addr: "127.0.0.1:0", DataDir: data, PushInterval: 100 * time.Millisecond}, io.Discard)
	err := run(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: data, PushInterval: 100 * time.Millisecond},
		slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard, nil)
	if !errors.Is(err, errDataLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second run on the same --data: %v", err)
	}
}

// TestIdleTimeout: a keep-alive connection with no request is closed
// after --idle-timeout.
func TestIdleTimeout(t *testing.T) {
	keys, _ := keyFile(t)
	p := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir(), "RANKWIRE_IDLE_TIMEOUT=1s")
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = br.ReadByte()
	if took := time.Since(start); !errors.Is(err, io.EOF) || took < 500*time.Millisecond || took > 5*time.Second {
		t.Fatalf("idle connection: %v after %v; want EOF after about 1 s", err, took)
	}
}

// awaitMetric polls the metrics listener until the series name reaches min.
func awaitMetric(t *testing.T, metricsAddr, name string, min float64) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`)
	await.For(t, 10*time.Second, func() error {
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		m := re.FindSubmatch(body)
		if m == nil {
			return fmt.Errorf("no %s", name)
		}
		if v, _ := strconv.ParseFloat(string(m[1]), 64); v < min {
			return fmt.Errorf("%s = %v, want >= %v", name, v, min)
		}
		return nil
	})
}

// TestReadTimeout: a body still incomplete after --read-timeout frees the
// connection: the gateway answers (never 5xx) or closes within a few
// seconds instead of waiting for the rest.
func TestReadTimeout(t *testing.T) {
	keys, sk := keyFile(t)
	p := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir(), "RANKWIRE_READ_TIMEOUT=1s")
	tok := adminToken(t, sk)
	if status, err := call("PUT", p.url("/v1/boards/b"), tok, "{}", nil); status != 200 {
		t.Fatalf("PUT board: %d %v", status, err)
	}
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	io.WriteString(c, "POST /v1/boards/b/scores HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+tok+
		"\r\nContent-Length: 100000\r\n\r\n{\"member\":")
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	took := time.Since(start)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || took > 5*time.Second || took < time.Second {
		t.Fatalf("slow body: %v after %v; want an answer or a close after about 1 s", err, took)
	}
	if err == nil && resp.StatusCode >= 500 {
		t.Fatalf("slow body answered %d", resp.StatusCode)
	}
}
