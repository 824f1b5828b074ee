package main

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
)

// The profiles' seeding, stopped halfway, resumes on the next start without
// overwriting a profile already there (an operator's edit), ends with the
// cheater's profile, and a start after that seeds nothing.
func TestDemoProfilesResume(t *testing.T) {
	ctx, h := demoHub(t)
	sim := func() *simulation { return demoSimulation(h, time.Minute, 40) }
	s := sim()
	// A first start that put 10 profiles before it was stopped, and an
	// operator's edit of one of them. The first write creates the tenant's
	// stream, which may outlast one call's budget on a loaded box.
	await.For(t, 30*time.Second, func() error { return s.putProfile(ctx, 0, s.players[0].name) })
	for i := 1; i < 10; i++ {
		if err := s.putProfile(ctx, i, s.players[i].name); err != nil {
			t.Fatal(err)
		}
	}
	edited := hub.Profile{Name: "Edited By Operator", Country: "MT"}
	if _, err := h.PutProfile(ctx, demoTenant, s.players[3].name, edited); err != nil {
		t.Fatal(err)
	}
	if s.hasProfile(demoCheater) {
		t.Fatal("the cheater's profile, the end marker, after a seeding stopped halfway")
	}

	s = sim()
	s.seedProfiles(ctx)
	if got := s.profiled.Load(); got != 41 {
		t.Errorf("a resumed seeding counted %d profiles, want 41 (40 players and the cheater)", got)
	}
	for i, p := range s.players {
		want := s.demoProfile(i, p.name)
		if i == 3 {
			want = edited
		}
		if got, err := h.Privacy().Profile(demoTenant, p.name, hub.Reach{}); err != nil || got.Name != want.Name || got.Country != want.Country {
			t.Errorf("profile of %s: %+v %v, want %+v", p.name, got, err, want)
		}
	}
	if !s.hasProfile(demoCheater) {
		t.Fatal("no cheater's profile after a finished seeding")
	}
	if left := s.toSeed.Load(); left != 0 {
		t.Errorf("the panel's profiles to seed after a finished seeding: %d", left)
	}

	// A finished seeding is never repeated: an edit after it stays.
	if _, err := h.PutProfile(ctx, demoTenant, s.players[20].name, edited); err != nil {
		t.Fatal(err)
	}
	s = sim()
	s.seedProfiles(ctx)
	if got := s.profiled.Load(); got != 0 {
		t.Errorf("a start after a finished seeding seeded %d profiles", got)
	}
	if got, err := h.Privacy().Profile(demoTenant, s.players[20].name, hub.Reach{}); err != nil || got.Name != edited.Name {
		t.Errorf("an edit after the seeding: %+v %v", got, err)
	}
}

// The seeding's order: the viewer and friends first, then by skill, best
// first, so the rows the demo page shows get their names first.
func TestDemoSeedOrder(t *testing.T) {
	s := demoSimulation(nil, time.Minute, demoPlayers)
	order := s.seedOrder()
	if len(order) != demoPlayers {
		t.Fatalf("%d indexes, want %d", len(order), demoPlayers)
	}
	seen := make(map[int]bool, len(order))
	for k, i := range order {
		seen[i] = true
		first := len(s.friends) + 1
		switch {
		case k < first && i != k:
			t.Fatalf("order[%d] = %d: the viewer and friends go first, in order", k, i)
		case k > first && s.players[i].skill > s.players[order[k-1]].skill:
			t.Fatalf("order[%d]: skill %g after %g", k, s.players[i].skill, s.players[order[k-1]].skill)
		}
	}
	if len(seen) != demoPlayers {
		t.Errorf("%d distinct players in the order, want %d", len(seen), demoPlayers)
	}
}

// demoHub starts a hub in a temp dir for the demo's tests, closed when the
// test ends, with a context for the test's calls that ends after a minute.
func demoHub(t *testing.T) (context.Context, *hub.Hub) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	h, err := hub.Start(ctx, hub.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return ctx, h
}

// demoSimulation is the demo's simulation over h with rounds of round,
// its log discarded, cut to its first players players (the demo's are
// 20,000).
func demoSimulation(h *hub.Hub, round time.Duration, players int) *simulation {
	s := newSimulation(h, slog.New(slog.NewTextHandler(io.Discard, nil)), round)
	s.players = s.players[:players]
	return s
}
