package hub

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/notify"
	"github.com/rankwire/rankwire/internal/shred"
)

// Personal data. A member's profile and linked aliases are personal data:
// the log never holds them in clear. PutProfile and Link seal them under
// a per-member key (internal/shred; the member's id stands for an alias
// given as the member, and an alias that names another member stands as
// that member's id), and every node's fetcher opens them before apply
// (follow.go). Erase destroys the keys, then logs an EvErase that every
// node applies (internal/ledger/profile_erase.go); the replica then
// snapshots at once (snapshot.go), the shared snapshot it replaces is
// wiped, and the notifications that showed the member's profile are
// rewritten without it. Notifications hold names sealed under the same keys
// (internal/notify/seal.go).

// PersonalData is what a tenant holds about one member (ledger.PersonalData).
type PersonalData = ledger.PersonalData

// Erasure is what an erasure erased.
type Erasure struct {
	Member  string // the member's id (an alias given resolves to it)
	Profile bool   // it had a profile
	Aliases int    // linked aliases renamed to pseudonyms (former ids of merged members stay)
}

// Privacy is the members' personal data: profiles, exports and erasure.
// It is the Hub's, got with Hub.Privacy; safe for concurrent use.
type Privacy struct{ h *Hub }

// Privacy returns the Hub's members' personal data.
func (h *Hub) Privacy() Privacy { return Privacy{h} }

// Keys returns the members' keys, which open the names sealed in stored
// notifications (notify.Body; package webhook).
func (m Privacy) Keys() notify.Sealer { return m.h.streams.keys }

// Profile returns member's profile (an id or alias) as a token of reach r
// reads it (Reach{}: every board): ErrNotFound where it has none, and, as
// for a member with no profile, unless the member ranks on a board r
// reaches.
func (m Privacy) Profile(tenant, member string, r Reach) (p Profile, err error) {
	notFound := func() error { return errorf(ErrNotFound, "profile of %q", member) }
	err = m.h.reg.readTenant(tenant, notFound, func(st *ledger.State) error {
		var ok bool
		if p, ok = st.Profile(member); !ok || !st.MemberReachable(member, r) {
			return notFound()
		}
		return nil
	})
	return p, err
}

// PersonalData returns what tenant holds about member (an id or alias):
// ErrNotFound where it names nobody, or ranks on no board r reaches.
func (m Privacy) PersonalData(tenant, member string, r Reach) (pd PersonalData, err error) {
	notFound := func() error { return errorf(ErrNotFound, "member %q", member) }
	err = m.h.reg.readTenant(tenant, notFound, func(st *ledger.State) error {
		var ok bool
		if pd, ok = st.PersonalData(member); !ok || !st.MemberReachable(member, r) {
			return notFound()
		}
		return nil
	})
	return pd, err
}

// Erase erases member's personal data (an id or alias) in tenant: its keys
// are destroyed first (a profile put meanwhile gets a new key), then the
// erasure is logged and applied, and Erase returns once this node's
// snapshot no longer holds the data, with what it erased. ErrNotFound
// where member names nobody, or ranks on no board r reaches; ErrForbidden
// where it ranks on a board r does not reach.
func (m Privacy) Erase(ctx context.Context, tenant, member string, r Reach) (Erasure, error) {
	pd, err := m.PersonalData(tenant, member, r)
	if err != nil {
		return Erasure{}, err
	}
	rep, err := m.h.replica(ctx, tenant, false)
	if err != nil {
		return Erasure{}, err
	}
	var owners []string
	_ = rep.read(func(st *ledger.State) error { owners = st.Owners(pd.Member); return nil })
	sl := m.h.streams
	if err := sl.keys.Destroy(ctx, tenant, owners...); err != nil {
		return Erasure{}, unavailable("the members' keys cannot be destroyed now", err)
	}
	ev := &ledger.Event{Kind: ledger.EvErase, Member: pd.Member, Aliases: owners[1:], Reach: reachOf(r)}
	out, err := sl.commit(ctx, rep, ev)
	if err == nil {
		err = out.Err
	}
	if err != nil {
		return Erasure{}, err
	}
	m.scrubNotifications(ctx, tenant, owners)
	e := Erasure{Member: pd.Member, Profile: pd.Profile != nil}
	for _, a := range pd.Aliases {
		if !ledger.IsPseudonym(a) && !slices.Contains(owners, a) {
			e.Aliases++
		}
	}
	// The erasure's own seq: the replica snapshots at it at once, while a
	// later event applied meanwhile may wait for the next regular snapshot.
	return e, m.awaitSnapshot(ctx, rep, out.Seq)
}

// scrubNotifications rewrites tenant's stored notifications that show the
// profile of one of owners. A failure is logged: the notifications leave
// the stream after notifyMaxAge anyway.
func (m Privacy) scrubNotifications(ctx context.Context, tenant string, owners []string) {
	n, err := shred.Scrub(ctx, m.h.js, notify.Stream, notify.Subject(tenant), owners)
	if err != nil {
		m.h.log.Warn("hub: notifications not scrubbed after an erasure", "tenant", tenant, "err", err)
		return
	}
	m.h.log.Info("hub: personal data erased", "tenant", tenant, "notifications_rewritten", n)
	m.h.snaps.compact.Streams(notify.Stream) // the rewritten notifications' proposals (snapshot.go compacts at the erasure's apply)
}

// awaitSnapshot waits until rep's snapshot file is at seq or later (an
// erasure snapshots at once whatever the snapshot settings: snapshot.go).
func (m Privacy) awaitSnapshot(ctx context.Context, rep *replica, seq uint64) error {
	for wait := time.Millisecond; rep.savedSeq.Load() < seq; wait = min(2*wait, 100*time.Millisecond) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("hub: erased, the snapshot not yet rewritten: %w", ctx.Err())
		case <-time.After(wait):
		}
	}
	return nil
}
