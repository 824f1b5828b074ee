package live

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

// subCount is the engine's subscriptions of every kind.
func subCount(p *Plane) int {
	n := 0
	for _, k := range p.eng.Stats().Subscriptions {
		n += k
	}
	return n
}

// A lobby that drops at once (a network blip) gives everything back: every
// subscription (the engine's counts exact, no view left), every tenant
// slot, every tracked connection, and every goroutine the connections
// started; following subscriptions are forgotten too.
func TestMassCloseGivesEverythingBack(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("a", "lobby", hub.Settings{Windows: []string{"all", "day"}})
	tok := e.token("a", auth.RoleRead)
	warm := e.dial("access_token="+tok, true, nil) // starts the plane's own goroutines
	warm.Subscribe("w", "lobby", map[string]any{"kind": "top", "limit": 5})
	checkFor(t, 10*time.Second, func() error { return wantSubs(e.p, 1) })
	warm.Conn().CloseNow()
	checkFor(t, 10*time.Second, func() error { return wantSubs(e.p, 0) })
	base := runtime.NumGoroutine()

	const n = 150
	clients := make([]*wsClient, n)
	for i := range clients {
		c := e.dial("access_token="+tok, true, nil)
		c.Subscribe("top", "lobby", map[string]any{"kind": "top", "limit": 10})
		c.Subscribe("me", "lobby", map[string]any{"kind": "rank", "rank": 1 + i%3})
		c.Send(map[string]any{"type": "subscribe", "id": "day", "board": "lobby", "follow": true,
			"window": "day", "view": map[string]any{"kind": "top", "limit": 3}})
		clients[i] = c
	}
	checkFor(t, 30*time.Second, func() error { return wantSubs(e.p, 3*n) })
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() { c.Conn().CloseNow() })
	}
	wg.Wait()
	checkFor(t, 30*time.Second, func() error {
		if err := wantSubs(e.p, 0); err != nil {
			return err
		}
		e.p.mu.Lock()
		conns, tenants := len(e.p.conns), len(e.p.tenants)
		e.p.mu.Unlock()
		e.p.followMu.Lock()
		follows := len(e.p.follows)
		e.p.followMu.Unlock()
		if conns+tenants+follows != 0 || e.p.eng.Stats().Views != 0 {
			return fmt.Errorf("%d connections, %d tenants, %d followed boards, %d views left",
				conns, tenants, follows, e.p.eng.Stats().Views)
		}
		if g := runtime.NumGoroutine(); g > base+5 {
			return fmt.Errorf("%d goroutines, %d before the crowd", g, base)
		}
		return nil
	})
}

func wantSubs(p *Plane, n int) error {
	if got := subCount(p); got != n {
		return fmt.Errorf("%d subscriptions, want %d", got, n)
	}
	return nil
}

// A closed connection's subscriptions are gone before its tenant's slot
// can be used again: whenever casino-b (cap 2) is seen holding no slot,
// its connection's subscriptions are gone already.
func TestSlotFreedAfterSubscriptions(t *testing.T) {
	e := newEnv(t, Options{})
	e.putBoard("b", "lobby", hub.Settings{})
	for round := range 5 {
		c := e.dial("access_token="+e.token("b", auth.RoleRead), true, nil)
		for i := range 8 {
			c.Subscribe(fmt.Sprint("s", i), "lobby", map[string]any{"kind": "top", "limit": 1 + i})
		}
		checkFor(t, 10*time.Second, func() error { return wantSubs(e.p, 8) })
		c.Conn().CloseNow()
		// A spin, not await.For: the subscriptions are checked the moment
		// the slot is seen free, before a poll's pause could let them go.
		// Bounded, so that a slot never given back fails, not hangs.
		deadline := time.Now().Add(10 * time.Second)
		for {
			e.p.mu.Lock()
			held := e.p.tenants["casino-b"]
			e.p.mu.Unlock()
			if held == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the slot still held 10 s after the close", round)
			}
			runtime.Gosched()
		}
		if got := subCount(e.p); got != 0 {
			t.Fatalf("round %d: the slot came back with %d subscriptions still live", round, got)
		}
	}
}
