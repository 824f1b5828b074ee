package loadtest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/testport"
)

// startRedis runs redis-server on a random loopback port without
// persistence and returns its host:port; it is killed at cleanup. It skips
// under -short, and where redis-server is not installed (fails, in CI). Protected mode is
// off, as in fanout_bench.sh: it refuses the workers' source addresses
// (127.0.0.2 …) as not local.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	switch {
	case testing.Short():
		t.Skip("starts redis-server: not under -short")
	case err != nil && os.Getenv("CI") == "true":
		t.Fatal("CI runs the peer with a real Redis: .ci/run installs redis-server")
	case err != nil:
		t.Skip("needs redis-server")
	}
	port := strconv.Itoa(testport.Free(t)) // redis-server binds it by number (internal/testport says why not :0)
	addr := net.JoinHostPort("127.0.0.1", port)
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", port, "--protected-mode", "no", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	rc := redis.NewClient(&redis.Options{Addr: addr})
	defer rc.Close()
	await.For(t, 10*time.Second, func() error { return rc.Ping(context.Background()).Err() })
	return addr
}

// TestFanoutRedisPeer runs 10 subscribers on the Redis pub/sub peer for
// 2 s: every one connects, and the top-N they are published decodes into
// latency samples.
func TestFanoutRedisPeer(t *testing.T) {
	addr := startRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := RunFanout(ctx, FanoutConfig{Target: Target{Board: "peer" + strconv.Itoa(time.Now().Nanosecond())}, Redis: addr,
		Subscribers: 10, BoardMembers: 200, Rate: 1000, Batch: 20, Writers: 2, Duration: 2 * time.Second, Drain: 300 * time.Millisecond})
	if err != nil {
		t.Fatalf("RunFanout: %v", err)
	}
	t.Log(rep)
	if rep.Connected != 10 || rep.MessagesPerSec <= 0 || len(rep.WorkerErrors) > 0 || len(rep.WriteErrors) > 0 {
		t.Fatalf("connected %d, messages/s %.0f, worker errors %v, write errors %v", rep.Connected, rep.MessagesPerSec, rep.WorkerErrors, rep.WriteErrors)
	}
	if l := rep.Latency["top"]; l.Count == 0 || l.P50 <= 0 || l.Max > 5*time.Second {
		t.Errorf("top latency %v", l)
	}
	if len(rep.Errors) > 0 {
		t.Errorf("errors %v", rep.Errors)
	}
}
