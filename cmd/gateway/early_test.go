package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/wire"
)

// TestEarlyHealthWhileClusterWaits: a clustered node whose routes lead
// nowhere waits for a majority; meanwhile its listener answers /healthz
// 200, /readyz 503 naming what it waits for, and /v1 503 unavailable with
// a Retry-After, within seconds of the listener opening.
func TestEarlyHealthWhileClusterWaits(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("a-test-cluster-secret-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 3)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg, err := parseConfig([]string{"--addr", addr, "--data", t.TempDir(), "--cluster", "rw-early", "--node", "n1",
		"--cluster-listen", "127.0.0.1:" + ports[0], "--cluster-secret-file", secret,
		"--routes", "nats://127.0.0.1:" + ports[0] + ",nats://127.0.0.1:" + ports[1] + ",nats://127.0.0.1:" + ports[2]},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard, nil) }()
	defer func() {
		cancel()
		<-errc // the hub's start ends with ctx; its error does not matter here
	}()
	base := "http://" + addr
	await.For(t, 10*time.Second, func() error { // the listener opens before the hub starts
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
	opened := time.Now()
	await.For(t, 2*time.Second, func() error { return want(base+"/healthz", 200, `"ok"`) })
	await.For(t, 2*time.Second, func() error {
		return want(base+"/readyz", 503, `waiting for a majority of cluster \"rw-early\"`)
	})
	await.For(t, 2*time.Second, func() error { return want(base+"/v1/boards", 503, `"unavailable"`) })
	// Every routeWatchEvery it says who answered: its own route listener
	// only, the two others being down.
	await.For(t, 10*time.Second, func() error {
		return want(base+"/readyz", 503, `(2 of 3 routes): answered 127.0.0.1:`+ports[0]+`;`)
	})
	t.Logf("early answers within %v of the listener opening", time.Since(opened).Round(time.Millisecond))
	resp, err := http.Get(base + "/v1/boards")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body wire.ErrorBody
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Error.Code != wire.CodeUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("/v1 while starting: %v %+v Retry-After %q", err, body, resp.Header.Get("Retry-After"))
	}
	select {
	case err := <-errc:
		t.Fatalf("run ended while the cluster had no majority: %v", err)
	default:
	}
}

// want returns nil where GET url answers status with a body holding sub.
func want(url string, status int, sub string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status || !strings.Contains(string(b), sub) {
		return fmt.Errorf("GET %s: %d %s; want %d with %s", url, resp.StatusCode, b, status, sub)
	}
	return nil
}

// TestBusyMetricsAddr: a --metrics-addr already taken fails the start
// before the hub starts (no WARN of a hub closed at once), with one error
// naming the flag and the address once, and no repeated prefix.
func TestBusyMetricsAddr(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	busy := taken.Addr().String()
	var logs strings.Builder
	err = run(context.Background(), Config{Addr: "127.0.0.1:0", MetricsAddr: busy, DataDir: t.TempDir(), PushInterval: 100 * time.Millisecond},
		slog.New(slog.NewTextHandler(&logs, nil)), io.Discard, nil)
	if err == nil {
		t.Fatal("started on a busy --metrics-addr")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "--metrics-addr "+busy+": ") || strings.Count(msg, busy) != 1 || !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("busy --metrics-addr: %q", msg)
	}
	if strings.Contains(logs.String(), "level=WARN") || strings.Contains(logs.String(), "hub") {
		t.Fatalf("the failed start logged more than it should:\n%s", logs.String())
	}
}

// TestBusyClusterPortsFailTheStart: a --cluster-listen or --nats-listen
// port that another process holds fails the start at once, naming the
// port. nats-server keeps no log here and carries on without the listener
// it could not open, so the start used to wait out the embedded server's
// whole start timeout (2 min) saying "waiting for a majority", every
// route answering: the taken port's holder answered for the node itself.
func TestBusyClusterPortsFailTheStart(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("a-test-cluster-secret-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--cluster-listen", "--nats-listen"} {
		t.Run(flag, func(t *testing.T) {
			taken, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer taken.Close()
			busy := taken.Addr().String()
			_, busyPort, _ := net.SplitHostPort(busy)
			ports := freePorts(t, 2)
			listen := map[string]string{"--cluster-listen": "127.0.0.1:" + ports[0], "--nats-listen": "127.0.0.1:" + ports[1]}
			listen[flag] = busy
			routes := "nats://" + listen["--cluster-listen"] + ",nats://127.0.0.1:" + ports[1]
			cfg, err := parseConfig([]string{"--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--data", t.TempDir(), "--cluster", "rw-busy", "--node", "n1",
				"--cluster-listen", listen["--cluster-listen"], "--nats-listen", listen["--nats-listen"],
				"--cluster-secret-file", secret, "--routes", routes}, func(string) string { return "" }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() { errc <- run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard, nil) }()
			select {
			case err := <-errc:
				cancel()
				if err == nil || !strings.Contains(err.Error(), busyPort) || !strings.Contains(err.Error(), "address already in use") {
					t.Fatalf("a busy %s: %v; want an error naming port %s", flag, err, busyPort)
				}
			case <-time.After(30 * time.Second):
				cancel()
				<-errc
				t.Fatalf("a start on a busy %s still running after 30 s", flag)
			}
		})
	}
}
