package hub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rankwire/rankwire/board"
	"github.com/rankwire/rankwire/identity"
	"github.com/rankwire/rankwire/internal/ledger"
)

// MaxAliases is the most aliases one Link takes.
const MaxAliases = ledger.MaxAliases

// Submit validates items as a whole (the error names the first bad index),
// hands them to the tenant's committer, which publishes them in one event
// together with the other Submit calls to the tenant waiting meanwhile
// (group commit, see committer.go), waits for JetStream's ack (durable)
// and then for the local replica to apply the event, and returns one Result
// per item, as the board's primary window shows it right after that item.
// An item whose ID the board has seen answers with the original result,
// Duplicate set. Cost: up to two publish round trips (the one in flight,
// then its own) plus the replica's lag; O(items × windows × log N) in the
// replica. Safe for concurrent use.
func (h *Hub) Submit(ctx context.Context, tenant, board string, items []Item) ([]Result, error) {
	if err := ledger.ValidateItems(items); err != nil {
		return nil, err
	}
	r, err := h.boardReplica(ctx, tenant, board)
	if err != nil {
		return nil, err
	}
	// Checked at ingest, so that a submission is refused with a clear error
	// rather than kept unranked, and the stream spared an event apply would
	// refuse; apply decides again in stream order, by the acceptance time.
	now := h.cfg.Now().UnixMilli()
	if err := r.read(func(st *ledger.State) error {
		items = st.ByID(items) // the log holds no linked alias in clear (members.go)
		return cmp.Or(st.CheckMemberRoom(len(items)), st.CheckOpen(board, now))
	}); err != nil {
		return nil, err
	}
	return h.streams.submitGrouped(ctx, r, board, items)
}

// maxMembers is the most member ids a tenant may hold: the largest handle
// a board ranks. A variable so that tests can lower it (for the replicas
// opened after).
var maxMembers uint32 = board.MaxMember

// PutBoard creates board or updates its settings, and returns it as
// applied. Changing the ordering (order, subscore_order, policy, tiebreak)
// of a board with entries fails with ErrConflict. The first board of a
// tenant creates the tenant's stream. It sets no board limit: see
// PutBoardUpTo.
func (h *Hub) PutBoard(ctx context.Context, tenant, board string, s Settings) (BoardInfo, error) {
	return h.PutBoardUpTo(ctx, tenant, board, s, 0)
}

// PutBoardUpTo is PutBoard where creating a board fails with ErrLimit
// (naming boards) while the tenant already has maxBoards boards; zero
// means no limit. Updating an existing board is never limited. The limit
// travels in the event and apply decides in stream order, so concurrent
// creates on any node never exceed it; the check here only spares the
// stream an event that would fail. Cost: as PutBoard.
func (h *Hub) PutBoardUpTo(ctx context.Context, tenant, board string, s Settings, maxBoards int) (BoardInfo, error) {
	if err := checkNames(tenant, board); err != nil {
		return BoardInfo{}, err
	}
	if maxBoards < 0 {
		return BoardInfo{}, errorf(ErrBadRequest, "boards limit %d is negative", maxBoards)
	}
	set, err := s.Normalize()
	if err != nil {
		return BoardInfo{}, err
	}
	r, err := h.replica(ctx, tenant, true)
	if err != nil {
		return BoardInfo{}, err
	}
	if err := r.read(func(st *ledger.State) error { return st.CheckBoardLimit(board, maxBoards) }); err != nil {
		return BoardInfo{}, err
	}
	ev := &ledger.Event{Kind: ledger.EvSettings, Board: board, Settings: &set, MaxBoards: maxBoards}
	if err := h.streams.commitErr(ctx, r, ev); err != nil {
		return BoardInfo{}, err
	}
	return h.Board(tenant, board)
}

// DeleteBoard deletes board with all its windows and seen ids.
func (h *Hub) DeleteBoard(ctx context.Context, tenant, board string) error {
	return h.boardEvent(ctx, tenant, &ledger.Event{Kind: ledger.EvDelete, Board: board})
}

// Reset empties board's all window (a new season); day, week and month
// windows stay readable.
func (h *Hub) Reset(ctx context.Context, tenant, board string) error {
	return h.boardEvent(ctx, tenant, &ledger.Event{Kind: ledger.EvReset, Board: board})
}

// RemoveMember removes member (an id or alias) from every window of board.
// ErrNotFound where the member has no entry there.
func (h *Hub) RemoveMember(ctx context.Context, tenant, board, member string) error {
	if p := identity.Reason(member); p != "" {
		return errorf(ErrBadRequest, "member: %s", p)
	}
	r, err := h.boardReplica(ctx, tenant, board)
	if err != nil {
		return err
	}
	_ = r.read(func(st *ledger.State) error { member = st.OwnerOf(member); return nil }) // no alias in clear (members.go)
	return h.streams.commitErr(ctx, r, &ledger.Event{Kind: ledger.EvRemove, Board: board, Member: member})
}

// Link links aliases to member; an alias of another member merges that
// member into member on every board of the tenant. Returns member's
// identity after the link. It allows merges: see LinkIn.
func (h *Hub) Link(ctx context.Context, tenant, member string, aliases []string) (Identity, error) {
	return h.LinkIn(ctx, tenant, member, aliases, true, Reach{})
}

// LinkIn is Link where, unless mayMerge, an alias that resolves to another
// member than the one member resolves to (a merge, which rewrites entries
// on every board) fails the whole link with ErrForbidden naming the alias,
// and nothing changes; and, for a token of board reach reach, where
// member ranks on a board reach does not reach, apply fails it with
// ErrForbidden naming the board (an alias shows on every board that ranks
// its member). Both travel in the event and apply decides in stream
// order, so a link racing a submission that creates the alias's member is
// judged the same way on every node. Cost: as Link.
func (h *Hub) LinkIn(ctx context.Context, tenant, member string, aliases []string, mayMerge bool, reach Reach) (Identity, error) {
	if err := checkNames(tenant, ""); err != nil {
		return Identity{}, err
	}
	if err := ledger.ValidateLink(member, aliases); err != nil {
		return Identity{}, err
	}
	r, err := h.replica(ctx, tenant, true)
	if err != nil {
		return Identity{}, err
	}
	q := h.quota.of(tenant)
	var plan ledger.LinkPlan // aliases new to the tenant are sealed; the others stand as their members' ids (members.go)
	if err := r.read(func(st *ledger.State) error {
		plan = st.PlanLink(member, aliases)
		return st.CheckAliasLimit(member, aliases, q.Aliases)
	}); err != nil {
		return Identity{}, err
	}
	ev := &ledger.Event{Kind: ledger.EvLink, Member: plan.Owner, Aliases: plan.Plain, NoMerge: !mayMerge, MaxAliases: q.Aliases,
		Reach: reachOf(reach)}
	if err := h.streams.keys.SealAliases(ctx, tenant, plan.Owner, ev, plan.Private); err != nil {
		return Identity{}, unavailable("the members' keys cannot be read now", err)
	}
	if err := h.streams.commitErr(ctx, r, ev); err != nil {
		return Identity{}, err
	}
	return h.Identity(tenant, member, Reach{})
}

// boardEvent publishes an event about an existing board.
func (h *Hub) boardEvent(ctx context.Context, tenant string, ev *ledger.Event) error {
	r, err := h.boardReplica(ctx, tenant, ev.Board)
	if err != nil {
		return err
	}
	return h.streams.commitErr(ctx, r, ev)
}

// boardReplica returns the replica of a tenant whose board exists (a
// pre-check: apply decides again in stream order); an unknown board is
// Unpublished, which a caller may retry once this node caught up.
func (h *Hub) boardReplica(ctx context.Context, tenant, board string) (*replica, error) {
	if err := checkNames(tenant, board); err != nil {
		return nil, err
	}
	r, err := h.replica(ctx, tenant, false)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err // unavailable: the tenant is down, or NATS
	}
	if err != nil || !r.hasBoard(board) {
		return nil, &Unpublished{errorf(ErrNotFound, "board %q", board)}
	}
	return r, nil
}

func (sl *streamLog) commitErr(ctx context.Context, r *replica, ev *ledger.Event) error {
	out, err := sl.commit(ctx, r, ev)
	if err != nil {
		return err
	}
	return out.Err
}

// commit gives ev a waiter key of this Hub's, sends it, waits for r to
// apply it, and returns what apply gave.
func (sl *streamLog) commit(ctx context.Context, r *replica, ev *ledger.Event) (ledger.Outcome, error) {
	ev.Waiter = sl.waiterKey()
	f := r.waits.Expect(ev.Waiter)
	defer r.waits.Forget(ev.Waiter)
	if err := sl.send(ctx, r, ev); err != nil {
		return ledger.Outcome{}, err
	}
	if err := sl.awaitApply(ctx, r, f); err != nil {
		return ledger.Outcome{}, err
	}
	return f.Out(), nil
}

// send stamps ev with the acceptance time, publishes it with ev.Waiter as
// its message id (retried through a leader change: publish.go) and returns
// once it is stored: commit's and Schedules.Fire's way to the stream.
func (sl *streamLog) send(ctx context.Context, r *replica, ev *ledger.Event) error {
	ev.At = sl.cfg.Now().UnixMilli()
	data, err := ledger.EncodeEvent(ev)
	if err != nil {
		return fmt.Errorf("hub: encode event: %w", err)
	}
	if sl.disk.Full() {
		return ErrStoreFull
	}
	return sl.publish(ctx, r, data, ev.Waiter)
}

// awaitApply waits until r applied the event f stands for, which JetStream
// has stored, for up to Config.WriteTimeout. A replica that has not
// applied it by then (its consumer is being replaced, or it is far behind)
// answers ErrUnavailable: the event is stored and will be applied, and the
// caller's retry with the same idempotency id answers as the original.
// Without the bound a reply could wait for ever on a wedged replica.
func (sl *streamLog) awaitApply(ctx context.Context, r *replica, f *flight) error {
	t := time.NewTimer(sl.cfg.WriteTimeout)
	defer t.Stop()
	select {
	case <-f.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-r.done:
		return ErrClosed
	case <-t.C:
		sl.nstats.ApplyTimeouts.Add(1)
		sl.log.Warn("hub: a stored write was not applied here in time; answered 503", "tenant", r.tenant,
			"applied", r.applied.Load(), "stored", r.follow.Stored(), "wait", sl.cfg.WriteTimeout)
		return unavailable("stored, but not applied on this node in time; retry with the same id", nil)
	}
}

// Decision is an admin's decision on a quarantined submission: which
// one, why (optional; ledger.CheckReason where given) and who (the
// token's sub). Both are recorded in the board's admin log.
type Decision struct {
	Board  string
	QID    uint64
	Reason string
	Sub    string
}

// event is d as the log stores it, of kind approve or reject, or
// ErrBadRequest naming reason.
func (d Decision) event(kind ledger.EventKind) (*ledger.Event, error) {
	if d.Reason != "" {
		if err := ledger.CheckReason(d.Reason); err != nil {
			return nil, err
		}
	}
	return &ledger.Event{Kind: kind, Board: d.Board, QID: d.QID, Reason: d.Reason, Sub: d.Sub, Logged: true}, nil
}

// Approve ranks the quarantined submission d.QID of d.Board as a new
// submission now, past the rules, and returns its result. ErrNotFound for
// an unknown board or qid (already decided, or never held); ErrConflict
// where the board has not started or has ended; ErrBadRequest naming reason.
func (d Disputes) Approve(ctx context.Context, tenant string, dec Decision) (Result, error) {
	h := d.h
	ev, err := dec.event(ledger.EvApprove)
	if err != nil {
		return Result{}, err
	}
	r, err := h.boardReplica(ctx, tenant, dec.Board)
	if err != nil {
		return Result{}, err
	}
	out, err := h.streams.commit(ctx, r, ev)
	if err != nil {
		return Result{}, err
	}
	if out.Err != nil {
		return Result{}, out.Err
	}
	return out.Results[0], nil
}

// Reject drops the quarantined submission d.QID of d.Board. ErrNotFound
// for an unknown board or qid; ErrBadRequest naming reason.
func (d Disputes) Reject(ctx context.Context, tenant string, dec Decision) error {
	ev, err := dec.event(ledger.EvReject)
	if err != nil {
		return err
	}
	return d.h.boardEvent(ctx, tenant, ev)
}

// PutProfile sets member's profile (an id or alias; a member that has
// never submitted is created) and returns it as stored. The error names
// the field.
func (h *Hub) PutProfile(ctx context.Context, tenant, member string, p Profile) (Profile, error) {
	return h.PutProfileIn(ctx, tenant, member, p, Reach{})
}

// reachOf is r as an event carries it: nil where it reaches every board,
// so that unscoped events encode as before.
func reachOf(r Reach) *ledger.Reach {
	if !r.Scoped {
		return nil
	}
	return &r
}

// PutProfileIn is PutProfile for a token of board reach reach: apply fails it
// with ErrForbidden, naming the board, where member ranks on a board
// reach does not reach (a profile shows on every board that ranks its member).
func (h *Hub) PutProfileIn(ctx context.Context, tenant, member string, p Profile, reach Reach) (Profile, error) {
	if err := checkNames(tenant, ""); err != nil {
		return Profile{}, err
	}
	if p := identity.Reason(member); p != "" {
		return Profile{}, errorf(ErrBadRequest, "member: %s", p)
	}
	p, err := p.Normalize()
	if err != nil {
		return Profile{}, err
	}
	r, err := h.replica(ctx, tenant, true)
	if err != nil {
		return Profile{}, err
	}
	q := h.quota.of(tenant)
	owner, same := member, false // the member id an alias stands for: the log holds no alias in clear (members.go)
	if err := r.read(func(st *ledger.State) error {
		owner = st.OwnerOf(member)
		cur, ok := st.Profile(member)
		same = ok && cur == p && !reach.Scoped // a scoped token: apply decides its reach
		return cmp.Or(st.CheckMemberRoom(1), st.CheckProfileLimit(member, q.Profiles))
	}); err != nil || same { // the same profile again: no event (a sealed one always changes the boards)
		return p, err
	}
	ev := &ledger.Event{Kind: ledger.EvProfile, Member: owner, Profile: &p, MaxProfiles: q.Profiles, Reach: reachOf(reach)}
	if err := h.streams.keys.SealProfile(ctx, tenant, owner, ev); err != nil {
		return Profile{}, unavailable("the members' keys cannot be read now", err)
	}
	if err := h.streams.commitErr(ctx, r, ev); err != nil {
		return Profile{}, err
	}
	return p, nil
}
