package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

type acked struct {
	member string
	score  float64
}

// TestCrashLosesNothingAcknowledged: concurrent writers submit to a gateway
// that is killed with SIGKILL mid-stream. After a restart every acknowledged
// submission is there, and the board equals a fresh replay of its stream.
func TestCrashLosesNothingAcknowledged(t *testing.T) {
	keys, sk := keyFile(t)
	data := t.TempDir()
	env := []string{"RANKWIRE_KEYS=" + keys, "RANKWIRE_DATA=" + data}
	p := startGateway(t, env...)
	tok := adminToken(t, sk)
	if status, err := call("PUT", p.url("/v1/boards/crash"), tok, `{"policy":"latest"}`, nil); status != 200 {
		t.Fatalf("PUT board: %d %v", status, err)
	}
	got := writeUntilKilled(t, p, tok)
	if len(got) < 50 {
		t.Fatalf("only %d submissions acknowledged before the kill", len(got))
	}
	t.Logf("%d submissions acknowledged before SIGKILL", len(got))

	p2 := startGateway(t, env...)
	for _, a := range got {
		var m struct{ Score float64 }
		if status, err := call("GET", p2.url("/v1/boards/crash/members/"+a.member), tok, "", &m); status != 200 || m.Score != a.score {
			t.Fatalf("acknowledged %s=%v: after restart %d %v %v", a.member, a.score, status, m.Score, err)
		}
	}
	restarted := topAll(t, p2, tok)
	stop(t, p2)
	// A fresh replay: the same stream, no snapshots.
	if err := os.RemoveAll(filepath.Join(data, "snapshots")); err != nil {
		t.Fatal(err)
	}
	p3 := startGateway(t, env...)
	if replayed := topAll(t, p3, tok); !reflect.DeepEqual(restarted, replayed) {
		t.Fatalf("restarted board differs from a fresh replay:\n%v\n%v", restarted, replayed)
	}
}

// writeUntilKilled runs 8 writers, kills the gateway once 200 submissions
// are acknowledged, and returns the acknowledged ones.
func writeUntilKilled(t *testing.T, p *proc, tok string) []acked {
	var (
		mu    sync.Mutex
		got   []acked
		count atomic.Int64
		wg    sync.WaitGroup
	)
	killed := make(chan struct{})
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				a := acked{fmt.Sprintf("w%d-%d", w, i%40), float64(i)}
				body := fmt.Sprintf(`{"member":%q,"score":%v,"id":"w%d-s%d"}`, a.member, a.score, w, i)
				status, err := call("POST", p.url("/v1/boards/crash/scores"), tok, body, nil)
				if err != nil || status != 200 {
					return // the gateway is gone
				}
				mu.Lock()
				got = append(got, a)
				mu.Unlock()
				if count.Add(1) == 200 {
					close(killed)
				}
			}
		}()
	}
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Fatal("200 submissions not acknowledged in 60 s")
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	// Later submissions of a member overwrite earlier ones (policy latest):
	// keep each member's last acknowledged score, in acknowledgement order.
	last := map[string]acked{}
	for _, a := range got {
		last[a.member] = a
	}
	out := make([]acked, 0, len(last))
	for _, a := range last {
		out = append(out, a)
	}
	return out
}

type row struct {
	Rank   int
	Member string
	Score  float64
}

func topAll(t *testing.T, p *proc, tok string) []row {
	t.Helper()
	var page struct {
		Total int
		Rows  []row
	}
	if status, err := call("GET", p.url("/v1/boards/crash/top?limit=1000"), tok, "", &page); status != 200 || err != nil {
		t.Fatalf("top: %d %v", status, err)
	}
	return page.Rows
}

// stop sends p SIGTERM and fails the test unless it exits cleanly within
// stopBound (sigtermWithin says why, with the goroutines of a hang).
func stop(t *testing.T, p *proc) {
	t.Helper()
	if _, err := sigtermWithin(p, stopBound); err != nil {
		t.Fatal(err)
	}
}

// natsServer builds and starts a real nats-server process (from the module
// the hub embeds), with JetStream where js is set, and returns its URL.
func natsServer(t *testing.T, js bool) string {
	url, _ := natsServerProc(t, js)
	return url
}

// natsServerProc is natsServer returning the process too.
func natsServerProc(t *testing.T, js bool) (string, *exec.Cmd) {
	t.Helper()
	bin := filepath.Join(os.TempDir(), "rankwire-test-nats-server")
	if _, err := os.Stat(bin); err != nil {
		out, err := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2").CombinedOutput()
		if err != nil {
			t.Fatalf("building nats-server: %v\n%s", err, out)
		}
	}
	port := freePort(t)
	args := []string{"-a", "127.0.0.1", "-p", fmt.Sprint(port)}
	if js {
		args = append(args, "-js", "-sd", t.TempDir())
	}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitForPort(t, port)
	return fmt.Sprintf("nats://127.0.0.1:%d", port), cmd
}

// TestReadyzFollowsNATS: /readyz answers 503 while the external NATS server
// is gone.
func TestReadyzFollowsNATS(t *testing.T) {
	url, nats := natsServerProc(t, true)
	keys, _ := keyFile(t)
	p := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir(), "RANKWIRE_NATS="+url)
	if status, err := call("GET", p.url("/readyz"), "", "", nil); status != 200 {
		t.Fatalf("readyz %d %v, want 200", status, err)
	}
	if err := nats.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	await.For(t, 20*time.Second, func() error {
		if status, _ := call("GET", p.url("/readyz"), "", "", nil); status != 503 {
			return fmt.Errorf("readyz %d after NATS went away, want 503", status)
		}
		return nil
	})
}

// TestExternalNATS: two gateways share a separately started nats-server;
// one writes, both read the same board.
func TestExternalNATS(t *testing.T) {
	url := natsServer(t, true)
	keys, sk := keyFile(t)
	tok := adminToken(t, sk)
	a := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir(), "RANKWIRE_NATS="+url)
	if status, err := call("PUT", a.url("/v1/boards/ext"), tok, `{}`, nil); status != 200 {
		t.Fatalf("PUT: %d %v", status, err)
	}
	for i := range 20 {
		body := fmt.Sprintf(`{"member":"p%d","score":%d}`, i, i*10)
		if status, err := call("POST", a.url("/v1/boards/ext/scores"), tok, body, nil); status != 200 {
			t.Fatalf("submit: %d %v", status, err)
		}
	}
	b := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir(), "RANKWIRE_NATS="+url)
	var page struct{ Total int }
	if status, err := call("GET", b.url("/v1/boards/ext/top"), tok, "", &page); status != 200 || page.Total != 20 {
		t.Fatalf("second gateway reads %d %v %+v", status, err, page)
	}
}

// TestExternalNATSWithoutJetStream: a clear error, exit non-zero.
func TestExternalNATSWithoutJetStream(t *testing.T) {
	url := natsServer(t, false)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "RANKWIRE_TEST_AS_GATEWAY=1", "RANKWIRE_ADDR=127.0.0.1:0",
		"RANKWIRE_DATA="+t.TempDir(), "RANKWIRE_NATS="+url)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("the gateway started on a NATS server without JetStream")
	}
	if !regexp.MustCompile(`(?i)jetstream`).Match(out) {
		t.Errorf("the error does not mention JetStream:\n%s", out)
	}
}
