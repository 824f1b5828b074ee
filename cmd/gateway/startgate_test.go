package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/rankwire/rankwire/internal/readiness"
)

// gateProber is a prober without a hub: judge only, fed made observations,
// its gate's health check answering what health holds.
func gateProber(health *string, logs *bytes.Buffer) *prober {
	return &prober{
		m:    readiness.New(readiness.Config{}),
		gate: &startGate{health: func() string { return *health }, log: slog.New(slog.NewTextHandler(logs, nil))},
	}
}

// TestStartGateBoundCountsFromWhenItAloneHolds: a node whose store answers
// nothing for its first 30 s (as one opening its tenants for that long),
// its NATS server's health check failing throughout, stays not ready for
// startGateMax after the store came back, the gate then alone holding it,
// and only then turns ready, logged. Before, the bound counted from the
// gate's first look: the node turned ready at 30 s, the very observation
// the store came back at, with the gate never satisfied.
func TestStartGateBoundCountsFromWhenItAloneHolds(t *testing.T) {
	health, logs := "JetStream stream 'RW_a' is not current", &bytes.Buffer{}
	p := gateProber(&health, logs)
	T := time.Unix(1_800_000_000, 0)
	obs := func(d time.Duration) readiness.Observation {
		return readiness.Observation{At: T.Add(d), Serving: true}
	}
	var clear time.Duration
	for d := time.Duration(0); d <= 30*time.Second; d += probeEvery {
		o := obs(d)
		o.Store = "nats: disconnected" // this node's own: at once
		if v, _ := p.judge(o); v.Ready || v.OnlyStarting {
			t.Fatalf("%v, store disconnected: %+v, want not ready, not for the gate alone", d, v)
		}
		clear = d + probeEvery
	}
	for d := clear; ; d += probeEvery {
		v, _ := p.judge(obs(d))
		if v.Ready {
			if waited := d - clear; waited < startGateMax || waited >= startGateMax+probeEvery {
				t.Fatalf("ready %v after the gate alone held, want %v (the observation that reaches it)", waited, startGateMax)
			}
			break
		}
		if !v.OnlyStarting || !strings.Contains(v.Reason, "starting:") {
			t.Fatalf("%v: %+v, want not ready for the gate alone", d, v)
		}
	}
	if !strings.Contains(logs.String(), "start-up work not done, ready all the same") || !strings.Contains(logs.String(), "alone=1s") {
		t.Fatalf("log %q, want the gate's giving up, with its bound", logs.String())
	}
}

// TestStartGatePassesAtOnce: a gate whose health check passes lets the
// node turn ready at that very observation, and logs what it waited for.
func TestStartGatePassesAtOnce(t *testing.T) {
	health, logs := "JetStream stream 'RW_a' is not current", &bytes.Buffer{}
	p := gateProber(&health, logs)
	T := time.Unix(1_800_000_000, 0)
	if v, _ := p.judge(readiness.Observation{At: T, Serving: true}); v.Ready || !v.OnlyStarting {
		t.Fatalf("health check failing: %+v, want not ready for the gate alone", v)
	}
	health = ""
	if v, _ := p.judge(readiness.Observation{At: T.Add(probeEvery), Serving: true}); !v.Ready {
		t.Fatalf("health check passed: %+v, want ready", v)
	}
	if !strings.Contains(logs.String(), "start-up work done") || !strings.Contains(logs.String(), "RW_a") {
		t.Fatalf("log %q, want the work done and what it was", logs.String())
	}
}

// TestHealthzFailureOfAHealthyServer: a real embedded JetStream server,
// started, passes its own health check (the gate's question).
func TestHealthzFailureOfAHealthyServer(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("embedded server not ready")
	}
	if why := healthzFailure(srv); why != "" {
		t.Fatalf("healthz of a healthy server: %q, want it to pass", why)
	}
}

// TestStartGateReleasesOnceWritableAndFresh: a restarted node whose NATS
// server's health check keeps failing (its Raft replica catching up) while
// its tenant's stream leader answers turns ready within startGateMax (and
// a probe) of its replica holding what the stream held at its first look,
// and never before: however long the gate has looked, a replica behind
// since before the first look is stale (its copy is as old as its
// downtime, not its start).
func TestStartGateReleasesOnceWritableAndFresh(t *testing.T) {
	health, logs := "JetStream stream '$G > RW_a' is not current: group node unhealthy", &bytes.Buffer{}
	p := gateProber(&health, logs)
	T := time.Unix(1_800_000_000, 0)
	obs := func(d time.Duration, applied, last uint64) readiness.Observation {
		return readiness.Observation{At: T.Add(d), Serving: true,
			Tenants: []readiness.Tenant{{Name: "a", Applied: applied, Last: last}}}
	}
	var last, applied uint64 = 4000, 0 // down for a while: 4,000 events behind
	var fresh time.Duration = -1
	for d := time.Duration(0); d < 10*time.Second; d += probeEvery {
		last += 100
		applied = min(last-3, applied+700) // catching up, then a few events behind under load
		v, _ := p.judge(obs(d, applied, last))
		if applied < 4100 { // not yet what the stream held at the first look
			if v.Ready || v.OnlyStarting {
				t.Fatalf("%v, applied %d of the first look's 4100: %+v, want not ready, stale", d, applied, v)
			}
			continue
		}
		if fresh < 0 {
			fresh = d
		}
		if v.Ready {
			if waited := d - fresh; waited > startGateMax {
				t.Fatalf("ready %v after writable and fresh, want within %v", waited, startGateMax)
			}
			if !strings.Contains(logs.String(), "ready all the same") {
				t.Fatalf("log %q, want the gate's release", logs.String())
			}
			return
		}
		if !v.OnlyStarting {
			t.Fatalf("%v, writable and fresh: %+v, want held by the gate alone", d, v)
		}
	}
	t.Fatalf("never ready in 10 s (fresh at %v)", fresh)
}
