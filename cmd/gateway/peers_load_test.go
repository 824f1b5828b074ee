package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/natsconf"
	"github.com/rankwire/rankwire/internal/natstest"
	"github.com/rankwire/rankwire/internal/reach"
	"github.com/rankwire/rankwire/internal/readiness"
)

// A stream leader under load (docs/BENCHMARKS.md, "100,000 WebSockets: the
// burst and the election"): a starved peer hears nobody, its beats reach
// the other peer but not the leader. The leader's watch, on the real
// embedded servers, must not hand its stream on (an election, for nothing:
// the new leader reaches the starved peer no better). Once that peer hears
// the other again but still not the leader (a real bridge), it does.
func TestBridgeNotBuiltAroundAPeerThatHearsNobody(t *testing.T) {
	srvs, c := startMetaCluster(t)
	st, leader := bridgedStream(t, srvs, c)
	s, fs := leaderAndFollowers(srvs, leader)
	starved, via := fs[0].Name(), fs[1].Name()
	conn := func() *nats.Conn { return clusterConn(t, c, s) }
	w := &peerWatch{node: leader, tab: reach.New(leader, 3, beatSilence, beatEvery), m: readiness.New(readiness.Config{}),
		view: newStreamView(s), log: slog.New(slog.NewTextHandler(t.Output(), nil))}
	stop, err := w.start(conn())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	f := &fakeBeats{nc: conn(), leader: leader, starved: starved, via: via, start: time.Now()}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { f.run(ctx) })
	defer wg.Wait()
	defer cancel()

	// Beats flow for a second (the scenario's time: the leader's table must
	// have heard both peers without a break), then the starved peer goes
	// deaf and its beats stop reaching the leader: three silences later,
	// nothing moved.
	time.Sleep(time.Second)
	f.set(true, false)
	deadline := time.Now().Add(3 * beatSilence)
	for time.Now().Before(deadline) {
		if moved := w.movedCount(); moved != 0 {
			t.Fatalf("the leader handed its streams on %d times around a peer that hears nobody", moved)
		}
		time.Sleep(beatEvery)
	}
	if got := streamLeader(t, st); got != leader {
		t.Fatalf("stream leader %s, want %s still", got, leader)
	}

	// The starved peer hears the other again, not the leader: a bridge.
	f.set(true, true)
	await.For(t, 4*beatSilence+bridgeEvery, func() error {
		if w.movedCount() == 0 {
			return fmt.Errorf("not handed on yet")
		}
		return nil
	})
}

// leaderAndFollowers returns the server of srvs named leader and the
// others, in srvs' order.
func leaderAndFollowers(srvs []*server.Server, leader string) (l *server.Server, fs []*server.Server) {
	for _, s := range srvs {
		if s.Name() == leader {
			l = s
		} else {
			fs = append(fs, s)
		}
	}
	return l, fs
}

// bridgedStream creates a replicated stream on srvs and returns it once its
// two followers are current, with its leader.
func bridgedStream(t *testing.T, srvs []*server.Server, c natsconf.Cluster) (jetstream.Stream, string) {
	t.Helper()
	_, js := natstest.Connect(t, srvs[0], clusterOpts(c, srvs[0])...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The meta leader places three replicas only once it has heard every
	// peer's state ("no suitable peers for placement, peer offline" before).
	var st jetstream.Stream
	await.For(t, 30*time.Second, func() (err error) {
		st, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "BRIDGED", Subjects: []string{"bridged"}, Replicas: 3})
		return err
	})
	var leader string
	await.For(t, 30*time.Second, func() error {
		info, err := st.Info(ctx)
		if err != nil || info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
			return fmt.Errorf("no leader and two followers yet: %v", err)
		}
		for _, r := range info.Cluster.Replicas {
			if !r.Current || r.Active > time.Second {
				return fmt.Errorf("follower %s not current", r.Name)
			}
		}
		leader = info.Cluster.Leader
		return nil
	})
	return st, leader
}

// clusterOpts are the options of a connection to s, a server of cluster c,
// in process.
func clusterOpts(c natsconf.Cluster, s *server.Server) []nats.Option {
	return append(natsconf.AuthOptions(c, natsconf.NATSAuth{}, true), nats.InProcessServer(s))
}

// clusterConn connects to s, a server of cluster c, in process, closed at
// t's cleanup.
func clusterConn(t *testing.T, c natsconf.Cluster, s *server.Server) *nats.Conn {
	t.Helper()
	nc, _ := natstest.Connect(t, s, clusterOpts(c, s)...)
	return nc
}

func streamLeader(t *testing.T, st jetstream.Stream) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := st.Info(ctx)
	if err != nil || info.Cluster == nil {
		t.Fatalf("stream info: %v", err)
	}
	return info.Cluster.Leader
}

// movedCount is the stream leaderships w handed on in a bridge.
func (w *peerWatch) movedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.moved
}

// fakeBeats publishes, on the leader's server, the beats its two peers
// would send it every beatEvery: via's always (it hears the leader and the
// starved peer), the starved peer's until it is cut from the leader.
type fakeBeats struct {
	nc                   *nats.Conn
	leader, starved, via string
	start                time.Time
	mu                   sync.Mutex // guards the fields below
	cut                  bool       // the starved peer's beats no longer reach the leader
	hearsVia             bool       // the starved peer still hears via (its beats name it)
}

// set changes what the starved peer's beats do from now on.
func (f *fakeBeats) set(cut, hearsVia bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cut, f.hearsVia = cut, hearsVia
}

func (f *fakeBeats) run(ctx context.Context) {
	tk := time.NewTicker(beatEvery)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		f.mu.Lock()
		cut, back := f.cut, f.hearsVia || !f.cut
		f.mu.Unlock()
		since := time.Since(f.start).Milliseconds()
		heard := func(n string, back bool) reach.Heard { return reach.Heard{Node: n, ForMS: since, Back: back} }
		_ = f.nc.Publish(beatSubject, reach.Beat{Node: f.via, Hears: []reach.Heard{heard(f.leader, true), heard(f.starved, back)}}.Marshal())
		if !cut {
			_ = f.nc.Publish(beatSubject, reach.Beat{Node: f.starved, Hears: []reach.Heard{heard(f.leader, true), heard(f.via, true)}}.Marshal())
		}
	}
}
