package loadtest

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce  sync.Once
	gatewayBin string
	gatewayDir string // the build's temp dir, removed by TestMain
	buildErr   error
)

// buildGateway builds ./cmd/gateway once per test binary into a temp dir.
func buildGateway(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rwload-gateway-")
		if err != nil {
			buildErr = err
			return
		}
		gatewayDir, gatewayBin = dir, filepath.Join(dir, "gateway")
		out, err := exec.Command("go", "build", "-o", gatewayBin, "../cmd/gateway").CombinedOutput()
		if err != nil {
			buildErr = err
			gatewayBin = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("go build ./cmd/gateway: %v\n%s", buildErr, gatewayBin)
	}
	return gatewayBin
}

var readyLine = regexp.MustCompile(`msg=ready addr=(\S+) metrics_addr=(\S+)`)

// startGateway runs the gateway binary with keys on a temp data dir and a
// random port, and flags (such as "--slow-timeout", "1s"), waits for its
// ready line and returns its base URL and its metrics listener's. The
// process is killed at cleanup.
func startGateway(t *testing.T, keys string, flags ...string) (string, string) {
	t.Helper()
	args := append([]string{"--keys", keys, "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0"}, flags...)
	cmd := exec.Command(buildGateway(t), args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := readyLine.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m
			}
		}
	}()
	select {
	case m := <-addr:
		return "http://" + m[1], "http://" + m[2]
	case <-time.After(30 * time.Second):
		t.Fatal("gateway not ready after 30 s")
		return "", ""
	}
}

// gatewayTarget starts a real gateway with a fresh key file (tenant e2e)
// and flags and returns a Target on board with a minted admin token. It
// skips under -short: it builds and starts the gateway.
func gatewayTarget(t *testing.T, board string, flags ...string) Target {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and starts the gateway")
	}
	keys := filepath.Join(t.TempDir(), "keys.json")
	key, err := WriteKeyFile(keys, "e2e", 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := key.Mint(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	url, metrics := startGateway(t, keys, flags...)
	return Target{URL: url, Metrics: metrics, Token: tok, Board: board}
}

// TestSubmitEndToEnd runs a short submit load against a real gateway and
// checks that every acknowledged submission is on the board, and nothing
// else.
func TestSubmitEndToEnd(t *testing.T) {
	target := gatewayTarget(t, "load")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := RunSubmit(ctx, SubmitConfig{Target: target, Clients: 4, Batch: 3, Duration: time.Second})
	if err != nil {
		t.Fatalf("RunSubmit: %v", err)
	}
	t.Log(rep)
	if rep.Submissions == 0 || len(rep.Errors) > 0 {
		t.Fatalf("submissions %d, errors %v", rep.Submissions, rep.Errors)
	}
	if rep.Submissions != rep.Requests*3 {
		t.Errorf("submissions %d, want requests×batch = %d", rep.Submissions, rep.Requests*3)
	}
	if rep.BoardBefore != 0 || rep.BoardAfter != rep.Submissions {
		t.Errorf("board members %d -> %d, want 0 -> %d (the acknowledged submissions)", rep.BoardBefore, rep.BoardAfter, rep.Submissions)
	}
	if rep.Latency.Count != rep.Requests || rep.Latency.P50 <= 0 || rep.Latency.Max < rep.Latency.P99 {
		t.Errorf("latency %v for %d requests", rep.Latency, rep.Requests)
	}
}

// TestReadEndToEnd preloads a small board and reads it under a light
// write load: every read kind answers.
func TestReadEndToEnd(t *testing.T) {
	target := gatewayTarget(t, "big")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := RunRead(ctx, ReadConfig{Target: target, Members: 2500, Readers: 2, ReadRate: 300,
		WriteRate: 500, WriteBatch: 10, WriteClients: 2, Duration: 500 * time.Millisecond})
	if err != nil {
		t.Fatalf("RunRead: %v", err)
	}
	t.Log(rep)
	if rep.Members != 2500 || len(rep.ReadErrors) > 0 || len(rep.WriteErrors) > 0 {
		t.Fatalf("members %d, read errors %v, write errors %v", rep.Members, rep.ReadErrors, rep.WriteErrors)
	}
	for _, k := range readKinds {
		if rep.Kinds[k].Count == 0 {
			t.Errorf("no %s reads", k)
		}
	}
	if rep.WriteAchieved <= 0 {
		t.Error("no background writes acknowledged")
	}
}

func TestLoopbackOnly(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:8080", true},
		{"http://127.0.0.2:8080", true},
		{"http://[::1]:8080", true},
		{"http://localhost:8080", false}, // a name could resolve anywhere
		{"http://10.0.0.1:8080", false},
		{"https://127.0.0.1:8080", false},
		{"::", false},
	}
	for _, tt := range tests {
		if err := checkLoopback(tt.url); (err == nil) != tt.ok {
			t.Errorf("checkLoopback(%q) = %v, want ok=%v", tt.url, err, tt.ok)
		}
	}
}

func TestKeyFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	want, err := WriteKeyFile(path, "bench", 5000)
	if err != nil {
		t.Fatal(err)
	}
	got, err := LoadKey(path, "bench")
	if err != nil || got.Kid != want.Kid || string(got.Secret) != string(want.Secret) {
		t.Fatalf("LoadKey = %+v, %v; want %+v", got, err, want)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"submissions_per_second": 5000`) {
		t.Errorf("key file lacks the limit:\n%s", data)
	}
	if _, err := LoadKey(path, "other"); err == nil {
		t.Error("LoadKey of a missing tenant succeeded")
	}
}
