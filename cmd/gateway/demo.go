package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/web"
)

const (
	demoTenant = "demo"
	demoBoard  = "weekly"
	demoTTL    = 24 * time.Hour
)

// demoKey is the generated demo tenant's signing key. Its secret lives only
// in this process: tokens it mints die with it. With the simulation started
// it is also the demo page's web.Demo.
type demoKey struct {
	key auth.SigningKey
	sim *simulation
	h   *hub.Hub
	reg prometheus.Gatherer // the gateway's metrics; set before serving

	mu   sync.Mutex // guards the fields below
	last time.Time  // when count was taken
	sent float64    // submissions counted at last
	rate float64    // submissions per second over the last second or more
}

// seedDemo creates the demo board and, where seed is set and the board is
// empty, preloads the simulated tournament's players.
func seedDemo(ctx context.Context, h *hub.Hub, sim *simulation, seed bool) error {
	if _, err := h.PutBoard(ctx, demoTenant, demoBoard, hub.Settings{Windows: []string{"all", "day", "week"}}); err != nil && !errors.Is(err, hub.ErrConflict) {
		return err
	}
	if !seed {
		return nil
	}
	return sim.preload(ctx)
}

// startDemo seeds the demo board and starts the simulated tournament (and,
// where seed is set, the profiles' seeding); the returned stop ends them
// and waits for them.
func (d *demoKey) startDemo(ctx context.Context, h *hub.Hub, seed bool, round time.Duration, log *slog.Logger) (stop func(), err error) {
	d.h, d.sim = h, newSimulation(h, log, round)
	if err := seedDemo(ctx, h, d.sim, seed); err != nil {
		return nil, err
	}
	if _, err := d.sim.sprint.ensure(ctx, time.Now()); err != nil {
		return nil, fmt.Errorf("opening a sprint: %w", err)
	}
	return d.sim.start(ctx, seed), nil
}

// adjudicate plays the operator once sprint round r opened: the cheater,
// whose impossible scores the rules held (its row showed its prize held),
// is disqualified from round r-1, which has just ended, so the prizes
// below it pass up; round r-2, final by now where a round lasts over a
// minute, is settled. Both are admin actions that GET /v1/audit lists. A
// restarted demo repeats them: the conflict (already done) is expected.
func adjudicate(ctx context.Context, h *hub.Hub, log *slog.Logger, r int64) {
	dq := hub.Amendment{Board: sprintBoard(r - 1), Member: demoCheater, Sub: "operator",
		Reason: "demo: impossible scores held in quarantine"}
	if _, err := h.Disputes().Disqualify(ctx, demoTenant, dq); expectedAmendErr(ctx, err) != nil {
		log.Warn("demo: disqualifying the cheater", "board", dq.Board, "err", err)
	}
	settle := hub.Amendment{Board: sprintBoard(r - 2), Sub: "operator", Reason: "demo: prizes paid"}
	if _, err := h.Disputes().Settle(ctx, demoTenant, settle); expectedAmendErr(ctx, err) != nil {
		log.Warn("demo: settling a sprint", "board", settle.Board, "err", err)
	}
}

// expectedAmendErr is err unless it is expected of adjudicate: no such
// round or member (the demo just started), already done, or stopping.
func expectedAmendErr(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, hub.ErrNotFound) || errors.Is(err, hub.ErrConflict) {
		return nil
	}
	return err
}

// demoSessionTTL is the life of a demo page's token: short, so that the
// widget's refresh before expiry is exercised by every demo visit.
const demoSessionTTL = 15 * time.Minute

// Session mints a read token for the demo viewer. Demo mode only: anyone
// who can reach the gateway gets one.
func (d *demoKey) Session() (web.Session, error) {
	exp := time.Now().Add(demoSessionTTL).Truncate(time.Second)
	tok, err := auth.Mint(d.key, auth.Claims{Tenant: demoTenant, Subject: demoViewer, Roles: auth.RoleRead, Boards: []string{demoBoard, sprintPrefix + "*"}, Expiry: exp})
	return web.Session{Token: tok, Expires: exp, Board: demoBoard, Member: demoViewer,
		Friends: append([]string{demoViewer}, d.sim.friends...), Prize: 100}, err
}

// Stats reports the panel's figures. The submission rate covers the
// simulation and the HTTP API, measured between calls at least a second apart.
func (d *demoKey) Stats() web.Stats {
	count, conns := d.sim.submitted.Load(), 0.0
	if d.reg != nil {
		count += int64(gathered(d.reg, "rankwire_submissions_total"))
		conns = gathered(d.reg, "rankwire_ws_connections")
	}
	var players int
	if info, err := d.h.Board(demoTenant, demoBoard); err == nil {
		players = info.Members
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if now := time.Now(); now.Sub(d.last) >= time.Second {
		if !d.last.IsZero() {
			d.rate = (float64(count) - d.sent) / now.Sub(d.last).Seconds()
		}
		d.last, d.sent = now, float64(count)
	}
	return web.Stats{SubmissionsPerSecond: math.Round(d.rate), Connections: int(conns), Players: players, Sprint: d.sim.sprint.Current(),
		SeedingProfiles: int(d.sim.toSeed.Load())}
}

// gathered sums every series of the metric name in g; 0 where it has none.
func gathered(g prometheus.Gatherer, name string) float64 {
	mfs, err := g.Gather()
	if err != nil {
		return 0
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

// printDemo prints the demo tokens and a curl line that works as printed.
func printDemo(w io.Writer, addr string, d *demoKey) {
	exp := time.Now().Add(demoTTL)
	admin, _ := auth.Mint(d.key, auth.Claims{Tenant: demoTenant, Subject: "operator", Roles: auth.RoleAdmin, Expiry: exp})
	read, _ := auth.Mint(d.key, auth.Claims{Tenant: demoTenant, Subject: "player-01", Roles: auth.RoleRead, Expiry: exp})
	base := "http://" + addr
	fmt.Fprintf(w, `
rankwire is serving on %[1]s (demo tenant %[2]q, board %[3]q; tokens valid 24 h)

demo page:   %[1]s/   (a simulated tournament of 20,000 players, live, and sprint tournaments
             that end and roll over, with prizes and a cheater whose scores land in quarantine)
console:     %[1]s/console   (the operator's back office: sign in with the admin token below)

admin token: %[4]s
read token:  %[5]s

try:
  curl -s -H "Authorization: Bearer %[5]s" "%[1]s/v1/boards/%[3]s/top?limit=5"

  # "you" with a mid-table score (the players' best scores run from about 30 to 10,000 at the start): it lands
  # near rank 5,000, arrives live in the demo page's Friends table, and sinks as the simulated players play on
  curl -s -X POST -H "Authorization: Bearer %[4]s" -d '{"member":"you","score":1000}' "%[1]s/v1/boards/%[3]s/scores"
  curl -s -H "Authorization: Bearer %[5]s" "%[1]s/v1/boards/%[3]s/members/you/around?radius=2"

  # the current sprint tournament's quarantine (the cheater's held scores) and its standings (the
  # cheater's prize, where it ranks in the top 10, is held: "prize_held":true)
  curl -s -H "Authorization: Bearer %[4]s" "%[1]s/v1/boards/%[6]s/quarantine"
  curl -s -H "Authorization: Bearer %[4]s" "%[1]s/v1/boards/%[6]s/standings?limit=10"

  # once a round ends the demo's operator disqualifies the cheater from it (the prizes pass down,
  # "revision":1) and settles the round before; the admin actions, who, what, when and why:
  curl -s -H "Authorization: Bearer %[4]s" "%[1]s/v1/audit?board=%[7]s"

`, base, demoTenant, demoBoard, admin, read, d.sim.sprint.Current(), d.sim.sprint.previous())
}
