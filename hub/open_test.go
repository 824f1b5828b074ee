package hub

import (
	"testing"
)

// A cold tenant's opening (its replay) does not hold up another tenant's:
// while one tenant's opening is held, another opens and is read, and a
// second caller of the held tenant shares its opening.
func TestColdTenantsOpenIndependently(t *testing.T) {
	url := startNATS(t)
	h := startHub(t, Config{NATSURL: url, DiscoverInterval: -1}) // opens tenants on first use only
	h1 := startHub(t, Config{NATSURL: url})
	mustPut(t, h1, "cold", "b", Settings{})
	mustPut(t, h1, "warm", "b", Settings{})
	mustSubmit(t, h1, "warm", "b", Item{Member: "p1", Score: 7})
	if h.reg.lookup("cold") != nil || h.reg.lookup("warm") != nil {
		t.Fatal("tenants opened before first use")
	}
	entered, release := make(chan string, 4), make(chan struct{})
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	h.reg.mu.Lock()
	h.reg.openHook = func(tenant string) {
		if tenant == "cold" {
			entered <- tenant
			<-release
		}
	}
	h.reg.mu.Unlock()
	coldDone := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := h.replica(testCtx(t), "cold", false)
			coldDone <- err
		}()
	}
	<-entered
	if _, err := h.replica(testCtx(t), "warm", false); err != nil {
		t.Fatalf("warm tenant while cold one opens: %v", err)
	}
	if got := top(t, h, Loc{Tenant: "warm", Board: "b"}); len(got) != 1 || got[0] != "p1:7" {
		t.Fatalf("warm board %v", got)
	}
	select {
	case err := <-coldDone:
		t.Fatalf("cold tenant's opening ended while held: %v", err)
	default:
	}
	close(release)
	released = true
	for range 2 {
		if err := <-coldDone; err != nil {
			t.Fatalf("cold tenant: %v", err)
		}
	}
	select {
	case tn := <-entered:
		t.Fatalf("%s opened twice: its callers should share one opening", tn)
	default:
	}
}

// A replica registered before it caught up with its stream (an opening
// that ran out of time: the registry keeps it, and it goes on catching
// up) serves nothing until it reaches the stream's end at its opening: its
// state would answer a board the log holds not found, and a write to it
// 404 where another node would take it. It answers unavailable instead.
func TestCatchingUpReplicaServesNothing(t *testing.T) {
	h := startHub(t, Config{})
	mustPut(t, h, "t1", "b", Settings{})
	mustSubmit(t, h, "t1", "b", Item{Member: "a", Score: 1})
	r := h.reg.lookup("t1")
	r.fp.from = r.applied.Load() + 5 // as though the stream ended 5 events further on when it opened
	_, err := h.Submit(testCtx(t), "t1", "b", []Item{{Member: "a", Score: 1}})
	wantErr(t, err, ErrUnavailable)
	_, err = h.Top(Loc{Tenant: "t1", Board: "b"}, 0, nil, 10)
	wantErr(t, err, ErrUnavailable)
	if !contains(err.Error(), "catching up") {
		t.Errorf("err = %v, want it to say the node is catching up", err)
	}
	r.fp.from = r.applied.Load() // caught up
	mustSubmit(t, h, "t1", "b", Item{Member: "c", Score: 2})
	if got := top(t, h, Loc{Tenant: "t1", Board: "b"}); len(got) != 2 || got[0] != "c:2" {
		t.Errorf("top = %v, want c:2 first of 2", got)
	}
}
