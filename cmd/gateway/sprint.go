package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/rankwire/rankwire/hub"
)

// The demo's sprints: short tournaments, one after another, that show what
// an operator's tournament does. Round r is the board "sprint-<r>", open
// from r·round to (r+1)·round (UTC, so a restarted demo finds the same
// round), with prizes for the top 10 and anti-cheat rules; the most active
// players play it, and a cheater submits impossible scores now and then,
// which its rules hold in the quarantine. Every player has a profile. Old
// rounds are deleted, keeping the last sprintKeep.
const (
	sprintPrefix  = "sprint-"
	sprintKeep    = 3
	sprintPlayers = 400 // the most active players take part
	demoCheater   = "Cheat0r9000"
)

var sprintPrizes = []hub.Prize{{From: 1, To: 1, Prize: "€1,000"}, {From: 2, To: 3, Prize: "€250"}, {From: 4, To: 10, Prize: "€50"}}

// sprintRules quarantine a score no honest player reaches, a jump no
// session gives, and a flood of submissions.
func sprintRules() *hub.Rules {
	minScore, maxScore, maxStep := 0.0, 200_000.0, 100_000.0
	return &hub.Rules{MinScore: &minScore, MaxScore: &maxScore, MaxStep: &maxStep, MaxPerMinute: 120}
}

// sprints runs the rounds of the simulation s.
type sprints struct {
	s     *simulation
	round time.Duration

	mu      sync.Mutex // guards current
	current string     // the board of the round under way; "" before the first
	opened  int64      // its round number
}

// sprintBoard names round r's board.
func sprintBoard(r int64) string { return fmt.Sprintf("%s%d", sprintPrefix, r) }

// Current returns the board of the round under way.
func (sp *sprints) Current() string {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.current
}

// ensure opens the round of now where it is not open yet, and deletes the
// rounds older than sprintKeep. It returns the round's board.
func (sp *sprints) ensure(ctx context.Context, now time.Time) (string, error) {
	r := now.UnixMilli() / sp.round.Milliseconds()
	sp.mu.Lock()
	if sp.current != "" && sp.opened == r {
		defer sp.mu.Unlock()
		return sp.current, nil
	}
	sp.mu.Unlock()
	name := sprintBoard(r)
	start := time.UnixMilli(r * sp.round.Milliseconds()).UTC()
	set := hub.Settings{StartsAt: start.Format(time.RFC3339Nano), EndsAt: start.Add(sp.round).Format(time.RFC3339Nano),
		Prizes: sprintPrizes, Rules: sprintRules()}
	if _, err := sp.s.h.PutBoard(ctx, demoTenant, name, set); err != nil && !errors.Is(err, hub.ErrConflict) {
		return "", err
	}
	for _, b := range sp.s.h.Boards(demoTenant) {
		var n int64
		if _, err := fmt.Sscanf(b.Name, sprintPrefix+"%d", &n); err == nil && strings.HasPrefix(b.Name, sprintPrefix) && n <= r-sprintKeep {
			if err := sp.s.h.DeleteBoard(ctx, demoTenant, b.Name); err != nil && !errors.Is(err, hub.ErrNotFound) {
				sp.s.log.Warn("demo: deleting an old sprint", "board", b.Name, "err", err)
			}
		}
	}
	sp.mu.Lock()
	sp.current, sp.opened = name, r
	sp.mu.Unlock()
	sp.s.log.Info("demo: a sprint tournament opened", "board", name, "ends_at", set.EndsAt)
	adjudicate(ctx, sp.s.h, sp.s.log, r) // demo.go: the ended rounds' disputes and settlement
	return name, nil
}

// previous returns the board of the round before the one under way.
func (sp *sprints) previous() string {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sprintBoard(sp.opened - 1)
}

// play submits n sessions of the most active players to the round's board,
// and, one tick in eighty (about every 8 s), the cheater's impossible one.
func (sp *sprints) play(ctx context.Context, now time.Time, n int) {
	board, err := sp.ensure(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			sp.s.log.Warn("demo: opening a sprint", "err", err)
		}
		return
	}
	s := sp.s
	items := make([]hub.Item, 0, n+1)
	for range n {
		u := s.rng.Float64()
		p := s.players[int(float64(min(sprintPlayers, len(s.players)))*u*u)]
		items = append(items, hub.Item{Member: p.name, Score: math.Round(s.session(p) * 4)})
	}
	if s.rng.IntN(80) == 0 {
		// A plausible score first (a first entry has no step: it ranks),
		// then the impossible one, which is held: the cheater's row shows
		// the review marker.
		items = append(items, hub.Item{Member: demoCheater, Score: float64(25_000 + s.rng.IntN(10_000))}, cheat())
	}
	if len(items) == 0 {
		return
	}
	if _, err := s.h.Submit(ctx, demoTenant, board, items); err != nil && ctx.Err() == nil && !errors.Is(err, hub.ErrConflict) {
		s.log.Warn("demo: sprint submit", "board", board, "err", err)
	}
}

// cheat is the cheater's submission: a score no session gives, which the
// sprint's max_score holds.
func cheat() hub.Item { return hub.Item{Member: demoCheater, Score: 999_999} }

// countries are the demo profiles' flags.
var countries = []string{"MT", "GB", "DE", "SE", "FI", "ES", "IT", "CA", "BR", "JP", "NZ", "IE", "NL", "PT", "AT"}

// displayName spaces a nickname: "LuckyFox7" → "Lucky Fox 7".
func displayName(nick string) string {
	var b strings.Builder
	for i, r := range nick {
		prevLetter := i > 0 && (nick[i-1] >= 'a' && nick[i-1] <= 'z' || nick[i-1] >= 'A' && nick[i-1] <= 'Z')
		if i > 0 && (r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' && prevLetter) {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}
