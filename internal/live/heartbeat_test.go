package live

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
)

// beatsFor waits until wc holds at least n heartbeats and returns them.
func beatsFor(t *testing.T, wc *wsClient, n int) []wsMsg {
	t.Helper()
	var beats []wsMsg
	checkFor(t, 10*time.Second, func() error {
		if beats = wc.Heartbeats(); len(beats) < n {
			return fmt.Errorf("%d heartbeats, want %d", len(beats), n)
		}
		return nil
	})
	return beats
}

// beatAt parses a heartbeat's at.
func beatAt(t *testing.T, m wsMsg) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, m.At)
	if err != nil || !strings.HasSuffix(m.At, "Z") {
		t.Fatalf("heartbeat at %q: not RFC 3339 in UTC (%v)", m.At, err)
	}
	return at
}

// TestHeartbeat: an authenticated connection gets a heartbeat every
// interval, at the server's time, with the tenant's applied seq (which a
// submission advances) and writable true; a connection that has not
// authenticated gets none.
func TestHeartbeat(t *testing.T) {
	const every = 100 * time.Millisecond
	e := newEnv(t, Options{HeartbeatInterval: every})
	e.putBoard("a", "weekly", hub.Settings{})
	bare := e.dial("", true, nil)
	c := e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
	first := beatsFor(t, c, 1)[0]
	before := e.hub.Beat("casino-a").Applied
	if first.Seq != before || before == 0 || !first.Writable {
		t.Fatalf("first heartbeat %+v, want seq %d (the board's creation) and writable", first, before)
	}
	if d := time.Since(beatAt(t, first)); d < -time.Second || d > 10*time.Second {
		t.Fatalf("heartbeat at %s, %v from the test's clock", first.At, d)
	}
	e.submit("a", "weekly", hub.Item{Member: "p1", Score: 10})
	after := e.hub.Beat("casino-a").Applied
	if after <= before {
		t.Fatalf("applied %d after a submission, %d before", after, before)
	}
	checkFor(t, 10*time.Second, func() error {
		if b := c.Heartbeats(); b[len(b)-1].Seq != after {
			return fmt.Errorf("last heartbeat %+v, want seq %d", b[len(b)-1], after)
		}
		return nil
	})
	n := len(c.Heartbeats())
	beats := beatsFor(t, c, n+5)[n-1:]
	// A ticker never runs fast on average; on a loaded machine it may run
	// late, within reason.
	mean := beatAt(t, beats[len(beats)-1]).Sub(beatAt(t, beats[0])) / time.Duration(len(beats)-1)
	if mean < every*9/10 || mean > 4*every {
		t.Fatalf("heartbeats %v apart on average, want about %v", mean, every)
	}
	if got := bare.Heartbeats(); len(got) != 0 {
		t.Fatalf("a connection without a token got heartbeats: %+v", got)
	}
}

// TestHeartbeatOff: a negative interval sends none and starts no goroutine.
func TestHeartbeatOff(t *testing.T) {
	e := newEnv(t, Options{HeartbeatInterval: -1})
	e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
	checkFor(t, 5*time.Second, func() error {
		if len(e.p.connections()) != 1 {
			return errors.New("the connection is not tracked yet")
		}
		return nil
	})
	if e.p.beats != nil {
		t.Fatal("heartbeats started with a negative interval")
	}
}

// TestHeartbeatTenantsOwnSeq: two tenants with the same board names each
// see their own tenant's applied seq, never the other's.
func TestHeartbeatTenantsOwnSeq(t *testing.T) {
	e := newEnv(t, Options{HeartbeatInterval: 50 * time.Millisecond})
	for _, tenant := range []string{"a", "b"} {
		e.putBoard(tenant, "weekly", hub.Settings{})
	}
	for i := range 5 {
		e.submit("a", "weekly", hub.Item{Member: fmt.Sprintf("p%d", i), Score: float64(i)})
	}
	e.submit("b", "weekly", hub.Item{Member: "p1", Score: 1})
	wantA, wantB := e.hub.Beat("casino-a").Applied, e.hub.Beat("casino-b").Applied
	if wantA == wantB {
		t.Fatalf("both tenants at seq %d: the test would not tell them apart", wantA)
	}
	ca := e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
	cb := e.dial("access_token="+e.token("b", auth.RoleRead), true, nil)
	for _, c := range []struct {
		wc   *wsClient
		want uint64
	}{{ca, wantA}, {cb, wantB}} {
		for _, m := range beatsFor(t, c.wc, 3) {
			if m.Seq != c.want {
				t.Errorf("heartbeat %+v, want its own tenant's seq %d (a: %d, b: %d)", m, c.want, wantA, wantB)
			}
		}
	}
}

// TestHeartbeatStoreFull: once the store refuses writes (a 1 MB store
// filled), heartbeats say writable false, to every tenant.
func TestHeartbeatStoreFull(t *testing.T) {
	e := newEnvHub(t, hub.Config{MaxStore: 1 << 20, SnapshotEvery: -1}, Options{HeartbeatInterval: 50 * time.Millisecond}, nil)
	e.putBoard("a", "filler", hub.Settings{})
	e.putBoard("b", "weekly", hub.Settings{})
	ca := e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
	cb := e.dial("access_token="+e.token("b", auth.RoleRead), true, nil)
	if m := beatsFor(t, cb, 1)[0]; !m.Writable {
		t.Fatalf("heartbeat before the store filled: %+v", m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	items := make([]hub.Item, 500)
	var err error
	for round := 0; round < 200 && err == nil; round++ { // 200 × ~25 KB: 5 MB, well past 1 MB
		for i := range items {
			items[i] = hub.Item{Member: fmt.Sprintf("m%04d-%03d", i, round), Score: float64(round),
				ID: fmt.Sprintf("%03d-%04d-%s", round, i, strings.Repeat("x", 16))}
		}
		_, err = e.hub.Submit(ctx, "casino-a", "filler", items)
	}
	if !errors.Is(err, hub.ErrStoreFull) {
		t.Fatalf("filling the store: %v, want ErrStoreFull", err)
	}
	for _, wc := range []*wsClient{ca, cb} {
		checkFor(t, 10*time.Second, func() error {
			if b := wc.Heartbeats(); b[len(b)-1].Writable {
				return fmt.Errorf("last heartbeat %+v on a full store", b[len(b)-1])
			}
			return nil
		})
	}
}

// BenchmarkHeartbeat is one heartbeat round (Plane.beat) over N
// authenticated connections of one tenant on real loopback sockets: one
// Writable, one hub.Beat, one encoding and N outbox puts. The writes are
// the writer pool's, after the round; the clients read and drop them.
func BenchmarkHeartbeat(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("conns=%d", n), func(b *testing.B) {
			_, p, url, tok := fanoutPlane(b, Options{HeartbeatInterval: -1}) // no ticker: the benchmark beats
			p.beatEvery = time.Second                                        // storeWritable's bound
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			b.Cleanup(func() { cancel(); wg.Wait() })
			dialReaders(b, ctx, &wg, n, url, tok, nil)
			await.For(b, 30*time.Second, func() error {
				authed := 0
				for _, c := range p.connections() {
					if _, ok := c.current(); ok {
						authed++
					}
				}
				if authed < n {
					return fmt.Errorf("%d of %d connections authenticated", authed, n)
				}
				return nil
			})
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				p.beat(time.Now())
			}
		})
	}
}

// TestHeartbeatStatus: Options.Status's answer for a tenant reaches its
// connections, WebSockets and event streams alike (an event "heartbeat"
// without an id, so that the stream's last id stays its view's seq), and
// only that tenant's: a second tenant with the same board names stays
// writable and fresh.
func TestHeartbeatStatus(t *testing.T) {
	status := func(tenant string) (bool, bool) { return tenant != "casino-a", tenant == "casino-a" }
	e := newEnv(t, Options{HeartbeatInterval: 50 * time.Millisecond, Status: status})
	for _, tenant := range []string{"a", "b"} {
		e.putBoard(tenant, "weekly", hub.Settings{})
	}
	ca := e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
	cb := e.dial("access_token="+e.token("b", auth.RoleRead), true, nil)
	if m := beatsFor(t, ca, 1)[0]; m.Writable || !m.Stale {
		t.Fatalf("casino-a's heartbeat %+v, want stale and not writable", m)
	}
	if m := beatsFor(t, cb, 1)[0]; !m.Writable || m.Stale {
		t.Fatalf("casino-b's heartbeat %+v, want writable and fresh", m)
	}
	sa := e.stream("board=weekly&kind=top&limit=3", e.token("a", auth.RoleRead), nil)
	if m := sa.msg(); m.Type != "snapshot" {
		t.Fatalf("first event %+v, want the snapshot", m)
	}
	select {
	case ev := <-sa.beats:
		m := decode(t, []byte(ev.Data))
		if ev.HasID || m.Type != "heartbeat" || m.Writable || !m.Stale || m.Seq != e.hub.Beat("casino-a").Applied {
			t.Fatalf("stream heartbeat %+v (id %q), want casino-a's, stale, without an id", m, ev.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no heartbeat on the event stream within 10 s")
	}
}

// beat queues one heartbeat on every authenticated connection that is
// reading, at once: one round as a single slot (BenchmarkHeartbeat's
// unit; the plane itself beats through its wheel).
func (p *Plane) beat(now time.Time) {
	b := beater{p: p, encoded: map[string][]byte{}}
	b.slot(now, 0, p.connections())
}
