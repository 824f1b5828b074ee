package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	fdelta "github.com/shadowspore/fossil-delta"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/testport"
)

// TestCentrifugoDoc decodes a delta subscription's publications as
// Centrifugo's JSON protocol sends them: the first whole (a JSON string),
// the next a fossil delta flagged "delta": true, applied to the one before;
// a delta before any whole one is an error, and a plain subscription's
// data is the document itself.
func TestCentrifugoDoc(t *testing.T) {
	first := []byte(`{"rows":[{"member":"m1","score":1000000001},{"member":"m2","score":2000000000}]}`)
	second := []byte(`{"rows":[{"member":"m1","score":1000000001},{"member":"m2","score":2000000777}]}`)
	push := func(data []byte, delta bool) []byte {
		q, _ := json.Marshal(string(data))
		line := `{"push":{"channel":"c","pub":{"data":` + string(q) + `,"offset":7`
		if delta {
			line += `,"delta":true`
		}
		return []byte(line + `}}}`)
	}
	var s wsSub
	if _, _, err := s.centrifugoDoc(push(fdelta.Create(first, second), true)); err != errDeltaNoBase {
		t.Fatalf("a delta first: %v, want errDeltaNoBase", err)
	}
	if got, delta, err := s.centrifugoDoc(push(first, false)); err != nil || delta || string(got) != string(first) {
		t.Fatalf("whole: %s, delta %v, %v", got, delta, err)
	}
	patch := fdelta.Create(first, second)
	if len(patch) >= len(second) {
		t.Fatalf("the delta (%d B) is not shorter than the document (%d B): the test shows nothing", len(patch), len(second))
	}
	if got, delta, err := s.centrifugoDoc(push(patch, true)); err != nil || !delta || string(got) != string(second) {
		t.Fatalf("delta: %s, delta %v, %v; want %s", got, delta, err, second)
	}
	var plain wsSub
	line := []byte(`{"push":{"channel":"c","pub":{"data":` + string(first) + `,"offset":1}}}`)
	if got, _, err := plain.centrifugoDoc(line); err != nil || string(got) != string(first) || plain.base != nil {
		t.Fatalf("plain: %s, %v, base %q", got, err, plain.base)
	}
}

// TestCentrifugoLobbyCommands: the app's broadcast names the channels a
// lobby's connections subscribe to, one each, and the commands are JSON
// with the delta fields where asked.
func TestCentrifugoLobbyCommands(t *testing.T) {
	lobby := centrifugoLobby("b", 4)
	var subbed []string
	for j := range 4 {
		subbed = append(subbed, centrifugoChannel("b", viewSpec{Kind: "top"}, 0, j, 4))
	}
	if !slices.Equal(lobby, subbed) || len(slices.Compact(slices.Clone(subbed))) != 4 {
		t.Fatalf("lobby %v, subscribed %v: want the same 4 distinct channels", lobby, subbed)
	}
	if centrifugoLobby("b", 1) != nil || centrifugoChannel("b", viewSpec{}, 0, 0, 1) != redisChannel("b") {
		t.Error("one subscription a connection: not the board's channel")
	}
	var bc struct {
		Channels []string        `json:"channels"`
		Data     json.RawMessage `json:"data"`
		Delta    bool            `json:"delta"`
	}
	if err := json.Unmarshal(appendBroadcast(nil, lobby, []byte(`{"rows":[]}`), true), &bc); err != nil || !slices.Equal(bc.Channels, lobby) || !bc.Delta || string(bc.Data) != `{"rows":[]}` {
		t.Errorf("broadcast: %+v, %v", bc, err)
	}
	var sub struct {
		ID        int `json:"id"`
		Subscribe struct {
			Channel string `json:"channel"`
			Delta   string `json:"delta"`
		} `json:"subscribe"`
	}
	if err := json.Unmarshal(subscribeCommand(5, "x", true), &sub); err != nil || sub.ID != 5 || sub.Subscribe.Channel != "x" || sub.Subscribe.Delta != "fossil" {
		t.Errorf("subscribe: %+v, %v", sub, err)
	}
	for _, c := range []FanoutConfig{
		{Redis: "127.0.0.1:2", PerConn: 4},
		{Redis: "127.0.0.1:2", Centrifugo: "127.0.0.1:1", PerConn: 4, Around: 1},
		{CentrifugoDelta: true, PerConn: 1},
	} {
		if err := c.withDefaults().check(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if err := (FanoutConfig{Redis: "127.0.0.1:2", Centrifugo: "127.0.0.1:1", PerConn: 4, CentrifugoDelta: true}).withDefaults().check(); err != nil {
		t.Errorf("a Centrifugo lobby with deltas: %v", err)
	}
}

// centrifugoDeltaConfig is Centrifugo's config for its delta option, as
// loadtest/watch_bench.sh writes it for its "centrifugo-delta" side:
// channels without a namespace allow fossil deltas, with the history and
// positioning Centrifugo OSS needs to compute them.
const centrifugoDeltaConfig = `{"http_server": {"address": "127.0.0.1", "port": %d},
 "client": {"insecure": true, "allowed_origins": ["*"]},
 "channel": {"without_namespace": {"allowed_delta_types": ["fossil"], "history_size": 10, "history_ttl": "300s", "force_positioning": true}},
 "http_api": {"key": "%s"}, "health": {"enabled": true}, "usage_stats": {"disabled": true}, "log": {"level": "error"}}`

// startCentrifugo runs a real Centrifugo (the binary at $RWLOAD_CENTRIFUGO,
// else /work/bin/centrifugo: v6.9.1 as docs/BENCHMARKS.md builds it) with
// centrifugoDeltaConfig on a free loopback port and returns its host:port;
// it is killed at cleanup. It SKIPS where the binary is absent, under
// CI=true too: CI does not install Centrifugo (building it takes minutes),
// so the tests using it check the benchmark's path on a machine that has
// it and are not part of CI's run. It skips under -short as well.
func startCentrifugo(t *testing.T, key string) string {
	t.Helper()
	bin := cmpOr(os.Getenv("RWLOAD_CENTRIFUGO"), "/work/bin/centrifugo")
	if testing.Short() {
		t.Skip("starts centrifugo: not under -short")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("needs Centrifugo at %s (not installed by CI: this test skips there too)", bin)
	}
	port := testport.Free(t)
	cfg := filepath.Join(t.TempDir(), "centrifugo.json")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, centrifugoDeltaConfig, port, key), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	await.For(t, 20*time.Second, func() error {
		resp, err := http.Get("http://" + addr + "/health")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("health: %s", resp.Status)
		}
		return nil
	})
	return addr
}

// TestCentrifugoLobbyDelta runs a lobby (2 connections of 3
// subscriptions, each on its own channel) against a real Centrifugo and
// Redis, once with full states and once with the delta option: every
// subscription joins, publications decode (deltas applied: a wrong one
// would be a decode error) into latency samples, and a delivered update
// costs fewer bytes with deltas than without. Skips without Centrifugo
// (startCentrifugo) or redis-server.
func TestCentrifugoLobbyDelta(t *testing.T) {
	addr := startRedis(t)
	cf := startCentrifugo(t, "k")
	perMsg := map[bool]float64{}
	for _, delta := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		rep, err := RunFanout(ctx, FanoutConfig{Target: Target{Board: "lobby" + strconv.FormatBool(delta)}, Redis: addr,
			Centrifugo: cf, CentrifugoKey: "k", CentrifugoDelta: delta, Subscribers: 6, PerConn: 3, BoardMembers: 10,
			Rate: 20, Batch: 1, Writers: 1, Duration: 2 * time.Second, Drain: 300 * time.Millisecond})
		cancel()
		if err != nil {
			t.Fatalf("delta %v: RunFanout: %v", delta, err)
		}
		t.Log(rep)
		if rep.Connected != 6 || rep.ConnectionsConnected != 2 || rep.MessagesPerSec <= 0 || len(rep.WorkerErrors)+len(rep.WriteErrors) > 0 {
			t.Fatalf("delta %v: connected %d on %d connections, messages/s %.0f, worker errors %v, write errors %v",
				delta, rep.Connected, rep.ConnectionsConnected, rep.MessagesPerSec, rep.WorkerErrors, rep.WriteErrors)
		}
		if len(rep.Errors) > 0 || len(rep.Closes) > 0 {
			t.Fatalf("delta %v: errors %v, closes %v", delta, rep.Errors, rep.Closes)
		}
		if l := rep.Latency["top"]; l.Count == 0 || l.Max > 5*time.Second {
			t.Errorf("delta %v: top latency %v", delta, l)
		}
		if rep.WireBytesPerSec < rep.BytesPerSec {
			t.Errorf("delta %v: %.0f B/s in frames, less than the %.0f B/s of the messages they carry", delta, rep.WireBytesPerSec, rep.BytesPerSec)
		}
		perMsg[delta] = rep.BytesPerSec / rep.MessagesPerSec
		if delta != (rep.DeltasPerSec > 0) || rep.DeltasPerSec > rep.MessagesPerSec {
			t.Errorf("delta %v: %.0f of %.0f messages/s came as deltas", delta, rep.DeltasPerSec, rep.MessagesPerSec)
		}
	}
	t.Logf("bytes per delivered update: %.0f with deltas, %.0f without", perMsg[true], perMsg[false])
	if perMsg[true] >= perMsg[false] {
		t.Errorf("bytes per delivered update: %.0f with deltas, %.0f without: want fewer", perMsg[true], perMsg[false])
	}
}
