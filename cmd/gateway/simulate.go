package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rankwire/rankwire/hub"
)

// The demo tournament's shape.
const (
	demoPlayers  = 20_000 // members preloaded into an empty demo board
	preloadBatch = 1_000  // items per preload submission: the protocol's batch cap
	demoViewer   = "player-01"
	simTick      = 100 * time.Millisecond
	simBaseRate  = 40.0 // submissions per second between bursts
)

// simPlayer is one simulated player: a name and a skill, the median of the
// scores their sessions produce.
type simPlayer struct {
	name  string
	skill float64
}

// simulation is the demo's tournament: a slots-style points race on the
// demo board (policy best, windows all, day, week). Players with higher
// skill score higher; more active players (the low indexes) play more; the
// rate idles at simBaseRate with a slow swell and bursts to ten times that
// for a few seconds at random intervals, as a lobby does when a promotion
// starts. Its random numbers only shape the demo: the board is still a
// function of the submissions in the log.
type simulation struct {
	h       *hub.Hub
	log     *slog.Logger
	rng     *rand.Rand // run's goroutine only, after preload
	players []simPlayer
	friends []string
	sprint  *sprints // the sprint tournaments (sprint.go)

	submitted atomic.Int64 // items submitted so far, for the stats panel
	profiled  atomic.Int64 // profiles the seeding has put or found, for the log
	toSeed    atomic.Int64 // profiles the seeding has still to put: the panel's progress
}

// newSimulation builds the players: demoViewer first, then generated nicknames.
// Skills come from a fixed seed, so a restarted demo keeps its players' names
// and skills; their luck comes from a fresh seed on every start. With a fixed
// luck seed too, every restart replayed the previous run's sessions, which
// policy best keeps as they were: the board froze while the page said LIVE.
func newSimulation(h *hub.Hub, log *slog.Logger, round time.Duration) *simulation {
	skills := rand.New(rand.NewPCG(2026, 5))
	s := &simulation{h: h, log: log, rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
	if round <= 0 {
		round = 5 * time.Minute // a Config not built from flags (tests)
	}
	s.sprint = &sprints{s: s, round: round}
	s.players = make([]simPlayer, demoPlayers)
	for i := range s.players {
		// Skill is log-normal: most players are ordinary, a few are sharks.
		s.players[i] = simPlayer{name: nickname(i), skill: 1000 * math.Exp(0.55*skills.NormFloat64())}
	}
	// The viewer hovers around the prize line (rank 100 of 20,000 is the
	// top 0.5 %, z ≈ 2.6), so the demo page shows them fighting for it.
	s.players[0] = simPlayer{name: demoViewer, skill: 1000 * math.Exp(0.55*2.0)}
	// Friends spread over the board: one near the top, the rest ordinary.
	for i, z := range []float64{3.3, 1.4, 0.4, -0.6} {
		s.players[i+1].skill = 1000 * math.Exp(0.55*z)
		s.friends = append(s.friends, s.players[i+1].name)
	}
	return s
}

var (
	nickAdjectives = []string{"Lucky", "Golden", "Wild", "Silent", "Royal", "Neon", "Crimson", "Iron", "Frosty", "Jolly",
		"Swift", "Mystic", "Cosmic", "Dizzy", "Brave", "Sly", "Velvet", "Turbo", "Sunny", "Shadow",
		"Rusty", "Happy", "Grand", "Ruby", "Atomic", "Stormy", "Clever", "Midnight", "Diamond", "Electric",
		"Bold", "Copper", "Lunar", "Fiery", "Polar", "Jade", "Rapid", "Cheeky", "Noble", "Hidden"}
	nickNouns = []string{"Ace", "Fox", "Tiger", "Spinner", "Joker", "Falcon", "Panda", "Wizard", "Comet", "Rider",
		"Phoenix", "Otter", "Baron", "Raven", "Shark", "Dragon", "Lynx", "Bandit", "Cobra", "Viking",
		"Knight", "Jackpot", "Rocket", "Bear", "Wolf", "Hawk", "Queen", "King", "Pirate", "Ninja",
		"Cowboy", "Samurai", "Gecko", "Badger", "Mantis", "Moose", "Parrot", "Orca", "Yeti", "Lion",
		"Hornet", "Bison", "Eagle", "Puma", "Kraken", "Goblin", "Sphinx", "Titan", "Rogue", "Monk"}
)

// nickname is player i's name: adjective, noun, number. The number is a
// one-to-one function of i / (40·50), so names are unique for any i.
func nickname(i int) string {
	a, n := len(nickAdjectives), len(nickNouns)
	return fmt.Sprintf("%s%s%d", nickAdjectives[i%a], nickNouns[(i/a)%n], 7+37*(i/(a*n)))
}

// session draws one session's score for p: skill times log-normal luck,
// whole points. The viewer's luck varies less: they play often, and the
// best of many wild draws would carry them far past the prize line.
func (s *simulation) session(p simPlayer) float64 {
	sigma := 0.45
	if p.name == demoViewer {
		sigma = 0.12
	}
	return math.Round(p.skill * math.Exp(sigma*s.rng.NormFloat64()))
}

// preload gives every player one score where the demo board is empty,
// in batches of preloadBatch: 20 events, a second or two. The players'
// profiles, 20,000 events and as many member keys, are seeded after the
// gateway serves (seedProfiles).
func (s *simulation) preload(ctx context.Context) error {
	info, err := s.h.Board(demoTenant, demoBoard)
	if err != nil || info.Members > 0 {
		return err
	}
	for start := 0; start < len(s.players); start += preloadBatch {
		items := make([]hub.Item, 0, preloadBatch)
		for _, p := range s.players[start:min(start+preloadBatch, len(s.players))] {
			items = append(items, hub.Item{Member: p.name, Score: math.Round(s.session(p) * 0.6)})
		}
		if _, err := s.h.Submit(ctx, demoTenant, demoBoard, items); err != nil {
			return fmt.Errorf("preloading players %d..: %w", start, err)
		}
	}
	return nil
}

// start runs the tournament until ctx ends and, where seed is set, seeds
// the players' profiles beside it; stop waits for both.
func (s *simulation) start(ctx context.Context, seed bool) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.run(ctx) })
	if seed {
		wg.Go(func() { s.seedProfiles(ctx) })
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

func (s *simulation) run(ctx context.Context) {
	t := time.NewTicker(simTick)
	defer t.Stop()
	var burstLeft int         // ticks of the current burst still to run
	nextBurst := s.burstGap() // ticks until the next burst
	var owed float64          // fractional submissions carried to the next tick
	for tick := 0; ; tick++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rate := simBaseRate * (1 + 0.35*math.Sin(float64(tick)/300)) // a swell over about three minutes
		if burstLeft > 0 {
			burstLeft--
			rate *= 10
		} else if nextBurst--; nextBurst <= 0 {
			burstLeft, nextBurst = 20+s.rng.IntN(30), s.burstGap()
		}
		owed += rate * simTick.Seconds()
		n := int(owed)
		owed -= float64(n)
		s.submit(ctx, s.batch(n))
		s.sprint.play(ctx, time.Now(), (n+2)/3)
	}
}

// burstGap is the number of ticks between bursts: 15 to 45 seconds.
func (s *simulation) burstGap() int { return 150 + s.rng.IntN(300) }

// batch draws n sessions. Activity is skewed: index ⌊N·u²⌋ makes low
// indexes (the viewer and friends among them) play far more than the tail.
func (s *simulation) batch(n int) []hub.Item {
	items := make([]hub.Item, 0, n+1)
	for range n {
		u := s.rng.Float64()
		p := s.players[int(float64(len(s.players))*u*u)]
		items = append(items, hub.Item{Member: p.name, Score: s.session(p)})
	}
	if s.rng.IntN(50) == 0 { // the viewer plays every 5 s or so
		items = append(items, hub.Item{Member: demoViewer, Score: s.session(s.players[0])})
	}
	return items
}

func (s *simulation) submit(ctx context.Context, items []hub.Item) {
	if len(items) == 0 {
		return
	}
	if _, err := s.h.Submit(ctx, demoTenant, demoBoard, items); err != nil {
		if ctx.Err() == nil {
			s.log.Warn("demo simulation: submit", "err", err)
		}
		return
	}
	s.submitted.Add(int64(len(items)))
}
