package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rankwire/rankwire/hub"
)

// The players' profiles are the demo's slowest seed: an event and a member
// key each, 20,000 of them, every one fsynced under the default --sync
// always (minutes on a loaded box). So the demo serves first and seeds them
// beside the simulation; the page shows nicknames until a profile lands.
//
// Invariants: the cheater's profile is put last, after every player's, so
// it marks a finished seeding; a start that finds it seeds nothing (a
// restart never seeds twice), and one that does not (the seeding was
// stopped halfway) resumes it, skipping every member that has a profile
// already, so an operator's edit through the API is never overwritten.
const profileWorkers = 16 // puts in flight: the store's fsyncs, not the CPU, bound them

// seedProfiles seeds the players' profiles unless a previous start
// finished it, and logs how it went. It returns when done or ctx ends.
func (s *simulation) seedProfiles(ctx context.Context) {
	if s.hasProfile(demoCheater) {
		return
	}
	began := time.Now()
	s.log.Info("demo: seeding the players' profiles in the background", "players", len(s.players))
	if err := s.profiles(ctx); err != nil {
		s.toSeed.Store(0) // the panel stops counting; the next start resumes
		if ctx.Err() == nil {
			s.log.Warn("demo: seeding profiles", "err", err, "seeded", s.profiled.Load())
		}
		return
	}
	s.log.Info("demo: profiles seeded", "profiles", s.profiled.Load(), "took", time.Since(began).Round(time.Millisecond))
}

// hasProfile reports whether member has a profile in the demo tenant.
func (s *simulation) hasProfile(member string) bool {
	_, err := s.h.Privacy().Profile(demoTenant, member, hub.Reach{})
	return err == nil
}

// demoProfile is the i-th seeded profile of name: a spaced display name
// and a country; the viewer and friends (the first indexes) get avatars.
func (s *simulation) demoProfile(i int, name string) hub.Profile {
	p := hub.Profile{Name: displayName(name), Country: countries[i%len(countries)]}
	if i <= len(s.friends) {
		p.Avatar = fmt.Sprintf("https://avatars.rankwire.example/%d.png", i)
	}
	return p
}

// profiles gives every player a profile, profileWorkers at a time, then the
// cheater, the marker of a finished seeding. Members that have a profile
// are skipped, so a second call puts only what the first did not. The
// viewer and friends go first, then the players by skill, best first: the
// rows the demo page shows (the top, around the viewer, the prize line)
// get their names within the first seconds.
func (s *simulation) profiles(ctx context.Context) error {
	order := s.seedOrder()
	s.toSeed.Store(int64(len(order) + 1))
	work := make(chan int)
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	for range profileWorkers {
		wg.Go(func() {
			for i := range work {
				if err := s.putProfile(ctx, i, s.players[i].name); err != nil {
					select {
					case errc <- err:
					default:
					}
					continue
				}
				s.toSeed.Add(-1)
			}
		})
	}
	err := feed(ctx, work, errc, order)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errc:
		default:
		}
	}
	if err != nil {
		return err
	}
	if err := s.putProfile(ctx, len(s.players), demoCheater); err != nil {
		return err
	}
	s.toSeed.Add(-1)
	return nil
}

// seedOrder is the players' indexes in the order profiles seeds them.
func (s *simulation) seedOrder() []int {
	order := make([]int, len(s.players))
	for i := range order {
		order[i] = i
	}
	first := min(len(s.friends)+1, len(order)) // the viewer and friends
	slices.SortStableFunc(order[first:], func(a, b int) int { return cmp.Compare(s.players[b].skill, s.players[a].skill) })
	return order
}

// feed sends order's indexes on work, then closes it; it stops early,
// returning the error, at the first error on errc or when ctx ends.
func feed(ctx context.Context, work chan<- int, errc <-chan error, order []int) error {
	defer close(work)
	for _, i := range order {
		select {
		case work <- i:
		case err := <-errc:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// putProfile puts the i-th profile, of name, unless name has one already.
func (s *simulation) putProfile(ctx context.Context, i int, name string) error {
	if !s.hasProfile(name) {
		if _, err := s.h.PutProfile(ctx, demoTenant, name, s.demoProfile(i, name)); err != nil {
			if errors.Is(err, context.Canceled) || ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("profile of %s: %w", name, err)
		}
	}
	s.profiled.Add(1)
	return nil
}
