package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
)

// The demo's sprints: a round opens with prizes and rules, its players have
// profiles, the cheater's score lands in quarantine, the round ends (its
// standings then carry ended_at and prizes) and the next opens; rounds
// older than sprintKeep are deleted.
func TestDemoSprints(t *testing.T) {
	ctx, h := demoHub(t)
	round := 2 * time.Second
	s := demoSimulation(h, round, 50) // profiles for 50, not 20,000
	// The first write creates the tenant's stream, which may outlast one
	// call's budget on a loaded box; the profiles' puts are idempotent.
	await.For(t, 30*time.Second, func() error { return s.profiles(ctx) })
	if p, err := h.Privacy().Profile(demoTenant, s.players[7].name, hub.Reach{}); err != nil || p.Name != displayName(s.players[7].name) || p.Country == "" {
		t.Fatalf("a player's profile: %+v %v", p, err)
	}
	// A round with time left for the submissions below: one that ended
	// under them would refuse them (ends_at).
	await.For(t, 2*round, func() error {
		if left := round - time.Duration(time.Now().UnixMilli()%round.Milliseconds())*time.Millisecond; left < round/2 {
			return fmt.Errorf("%v left in the round", left)
		}
		return nil
	})
	now := time.Now()
	board, err := s.sprint.ensure(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	// The cheater's plausible first score, which ranks, goes in before
	// the players' sessions: one draw in eighty of play adds the cheater's
	// own 25,000–35,000 first, and from there 199,000 is a step past
	// max_step, held instead of ranked.
	if _, err := h.Submit(ctx, demoTenant, board, []hub.Item{{Member: demoCheater, Score: 199_000}}); err != nil {
		t.Fatal(err)
	}
	s.sprint.play(ctx, now, 30)
	// Then the impossible one: held.
	if _, err := h.Submit(ctx, demoTenant, board, []hub.Item{cheat()}); err != nil {
		t.Fatal(err)
	}
	if st, _ := h.Disputes().Standings(demoTenant, board, 0, 1); len(st.Rows) != 1 || st.Rows[0].Member != demoCheater || !st.Rows[0].PrizeHeld {
		t.Fatalf("the cheater's prize is not held: %+v", st.Rows)
	}
	held, _, err := h.Disputes().Quarantine(demoTenant, board, 0, 10)
	if err != nil || len(held) == 0 || held[len(held)-1].Member != demoCheater || held[len(held)-1].Reason != hub.ReasonMaxScore {
		t.Fatalf("the cheater in quarantine: %+v %v", held, err)
	}
	if p, _ := h.Top(hub.Loc{Tenant: demoTenant, Board: board}, 0, nil, 3); len(p.Rows) == 0 || p.Rows[0].Profile.Name == "" {
		t.Fatalf("the sprint's top rows show no profile names: %+v", p.Rows)
	}
	await.For(t, 10*time.Second, func() error {
		st, err := h.Disputes().Standings(demoTenant, board, 0, 10)
		if err != nil || st.EndedAt == "" || st.Rows[0].Prize != "€1,000" {
			return fmt.Errorf("standings %+v %v", st, err)
		}
		return nil
	})
	next, err := s.sprint.ensure(ctx, time.Now())
	if err != nil || next == board || s.sprint.Current() != next {
		t.Fatalf("the next round: %q (was %q), %v", next, board, err)
	}
	// The ended round's cheater is disqualified: the prize passes down.
	st, err := h.Disputes().Standings(demoTenant, board, 0, 10)
	if err != nil || st.Revision != 1 || len(st.Rows) == 0 || st.Rows[0].Member == demoCheater || st.Rows[0].Prize != "€1,000" {
		t.Fatalf("the ended round after the disqualification: %+v %v", st, err)
	}
	if acts, _, _ := h.Disputes().AdminActions(demoTenant, board, 0, 10); len(acts) != 1 || acts[0].Member != demoCheater || acts[0].Sub != "operator" {
		t.Fatalf("the admin actions: %+v", acts)
	}
	// Far ahead: the rounds older than sprintKeep go.
	later, err := s.sprint.ensure(ctx, time.Now().Add(time.Duration(sprintKeep+1)*round))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Board(demoTenant, board); err == nil {
		t.Fatalf("round %s kept after %s opened", board, later)
	}
	if _, err := h.Board(demoTenant, later); err != nil {
		t.Fatal(err)
	}
}

func TestDisplayName(t *testing.T) {
	for in, want := range map[string]string{"LuckyFox7": "Lucky Fox 7", "RoyalAce81": "Royal Ace 81", "Cheat0r9000": "Cheat 0r 9000", "player-01": "player-01"} {
		if got := displayName(in); got != want {
			t.Errorf("displayName(%q) = %q, want %q", in, got, want)
		}
	}
}
