package hub

import (
	"context"
	"errors"

	"github.com/rankwire/rankwire/internal/ledger"
)

// AdminAction is one admin action on a board (ledger.AdminAction).
type AdminAction = ledger.AdminAction

// MaxAuditPage is the most admin actions one AdminActions call returns.
const MaxAuditPage = 500

// Amendment is one admin amendment of a board's standings: who asks (the
// token's sub), about whom, and why.
type Amendment struct {
	Board  string
	Member string // an id or alias; unused by Settle
	Reason string
	Sub    string
}

// Disputes is the review of a tenant's boards before payout: the
// quarantine and its decisions, the final standings, and the amendments
// (disqualify, reinstate, settle) with their audit. It is the Hub's, got
// with Hub.Disputes; its methods are safe for concurrent use.
type Disputes struct{ h *Hub }

// Disputes returns the Hub's review of boards before payout.
func (h *Hub) Disputes() Disputes { return Disputes{h} }

// Disqualify takes a.Member out of a.Board's standings: the members below
// move up and the prizes pass down with them. ErrNotFound for an unknown
// board or member; ErrConflict where the member is already disqualified or
// the board was settled; ErrBadRequest naming reason.
func (d Disputes) Disqualify(ctx context.Context, tenant string, a Amendment) (AdminAction, error) {
	return d.amend(ctx, tenant, ledger.EvDisqualify, a)
}

// Reinstate puts a disqualified member back. ErrConflict where the member
// is not disqualified or the board was settled.
func (d Disputes) Reinstate(ctx context.Context, tenant string, a Amendment) (AdminAction, error) {
	return d.amend(ctx, tenant, ledger.EvReinstate, a)
}

// Settle declares a.Board's payout done: its standings never change again.
// ErrConflict where the standings are not final yet or already settled.
func (d Disputes) Settle(ctx context.Context, tenant string, a Amendment) (AdminAction, error) {
	a.Member = ""
	return d.amend(ctx, tenant, ledger.EvSettle, a)
}

// amend commits an amendment and returns the admin action it recorded,
// as the board's admin log holds it.
func (d Disputes) amend(ctx context.Context, tenant string, kind ledger.EventKind, a Amendment) (AdminAction, error) {
	h := d.h
	if err := ledger.CheckReason(a.Reason); err != nil {
		return AdminAction{}, err
	}
	r, err := h.boardReplica(ctx, tenant, a.Board)
	if err != nil {
		return AdminAction{}, err
	}
	_ = r.read(func(st *ledger.State) error { a.Member = st.OwnerOf(a.Member); return nil }) // no alias in clear (members.go)
	return d.commit(ctx, r, &ledger.Event{Kind: kind, Board: a.Board, Member: a.Member, Reason: a.Reason, Sub: a.Sub})
}

// commit commits an amendment event on r and returns the admin action the
// board's log recorded for it.
func (d Disputes) commit(ctx context.Context, r *replica, ev *ledger.Event) (AdminAction, error) {
	out, err := d.h.streams.commit(ctx, r, ev)
	if err == nil {
		err = out.Err
	}
	if err != nil {
		return AdminAction{}, err
	}
	// The replica applied the event: the log holds its action (unless a
	// later event deleted the board; then the action is as committed).
	act := AdminAction{Seq: out.Seq, Action: string(ev.Kind), Member: ev.Member, Sub: ev.Sub, Reason: ev.Reason}
	_ = r.read(func(st *ledger.State) error {
		if acts, _, err := st.AdminActions(ev.Board, out.Seq-1, 1); err == nil && len(acts) == 1 && acts[0].Seq == out.Seq {
			act = acts[0]
		}
		return nil
	})
	return act, nil
}

// voidAttempts bounds the plans of one Void: a plan goes stale only when
// the member submitted meanwhile.
const voidAttempts = 3

// Void voids the submission to a.Board whose result carried seq: the
// member's entry in every window becomes what the member's other
// submissions make of it (ledger.VoidPlanner, which replays the tenant's
// log: O(events) per call, two passes; a plan gone stale continues over
// the events since). ErrNotFound naming seq where no
// ranked submission of the board carried it; ErrConflict where it was
// voided already, no longer counts, or the board was settled; ErrLimit
// while another void of the tenant is being planned.
func (d Disputes) Void(ctx context.Context, tenant string, a Amendment, seq uint64) (AdminAction, error) {
	if err := ledger.CheckReason(a.Reason); err != nil {
		return AdminAction{}, err
	}
	r, err := d.h.boardReplica(ctx, tenant, a.Board)
	if err != nil {
		return AdminAction{}, err
	}
	// A plan holds a second copy of the tenant's state: one at a time.
	if !r.voiding.CompareAndSwap(false, true) {
		return AdminAction{}, errorf(ErrLimit, "seq: another void of the tenant is being prepared; one at a time")
	}
	defer r.voiding.Store(false)
	var pl voidPlan
	for attempt := 1; ; attempt++ {
		v, err := d.planVoid(ctx, r, tenant, a.Board, seq, &pl)
		if err != nil {
			return AdminAction{}, err
		}
		ev := &ledger.Event{Kind: ledger.EvVoid, Board: a.Board, Member: v.Member, Void: v, Reason: a.Reason, Sub: a.Sub}
		act, err := d.commit(ctx, r, ev)
		if !errors.Is(err, ledger.ErrVoidStale) || attempt == voidAttempts {
			return act, err
		}
	}
}

// voidPlan is a Void's planner and the last event of the log it was fed.
type voidPlan struct {
	p    *ledger.VoidPlanner
	last uint64
}

// planVoid plans the void of seq up to what r applied: the first time
// (pl.p nil) by replaying tenant's log into a new VoidPlanner; after a
// stale plan by feeding pl.p the events since pl.last, and afresh where
// the planner says the seq names another submission now.
func (d Disputes) planVoid(ctx context.Context, r *replica, tenant, board string, seq uint64, pl *voidPlan) (*ledger.Void, error) {
	var last uint64
	if err := r.read(func(st *ledger.State) error { last = st.Seq(); return st.CheckAmendable(board) }); err != nil {
		return nil, err
	}
	stream, err := d.h.streams.stream(ctx, tenant, false)
	if err != nil {
		return nil, err
	}
	if pl.p != nil && last > pl.last { // replayRange would read past last with nothing after pl.last
		if err := d.h.streams.replayRange(ctx, stream, pl.last, last, pl.p.Apply); err != nil {
			return nil, unavailable(logUnavailable, err)
		}
		pl.last = last
		if v, err := pl.p.Plan(); !errors.Is(err, ledger.ErrVoidStale) {
			return v, err
		}
	}
	pl.p, pl.last = ledger.NewVoidPlanner(board, seq), last
	for pl.p.Next() {
		if err := d.h.streams.replayTo(ctx, stream, last, pl.p.Apply); err != nil {
			return nil, unavailable(logUnavailable, err)
		}
	}
	return pl.p.Plan()
}

// AdminActions returns up to limit (1..MaxAuditPage) of board's admin
// actions after the one with stream sequence after, oldest first, and
// whether more follow. ErrNotFound for an unknown board.
func (d Disputes) AdminActions(tenant, board string, after uint64, limit int) (out []AdminAction, more bool, err error) {
	h := d.h
	if err := checkNames(tenant, board); err != nil {
		return nil, false, err
	}
	if limit < 1 || limit > MaxAuditPage {
		return nil, false, errorf(ErrBadRequest, "limit: %d is not in 1..%d", limit, MaxAuditPage)
	}
	err = h.reg.readBoard(tenant, board, func(st *ledger.State) (err error) {
		out, more, err = st.AdminActions(board, after, limit)
		return err
	})
	return out, more, err
}
