package live

import (
	"context"
	"errors"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/effects"
	"github.com/rankwire/rankwire/internal/names"
	"github.com/rankwire/rankwire/wire"
)

// boardMessage returns the board message of m's subscription, or nil for a
// board that is no tournament. Where this node does not know m.Board, it
// first waits, bounded, until its replica has applied what the tenant's
// stream held when it asked (internal/catchup): a board created through
// another gateway a moment ago is then found, and the board message and
// the join read it; where the replica cannot catch up in time, the error
// (unavailable) answers the subscription, never a not found this node
// cannot vouch for. A board the token may not read, or an invalid name,
// is left to the join to refuse, unasked.
func (p *Plane) boardMessage(ctx context.Context, sc auth.Scope, m clientMsg) ([]byte, error) {
	if effects.AllowMessage(wire.TypeSubscribe, sc, m.Board) != nil || !names.Valid(m.Board) {
		return nil, nil // the join refuses it: nothing of the board goes out
	}
	info, err := p.hub.Board(sc.Tenant, m.Board)
	if errors.Is(err, hub.ErrNotFound) {
		err = p.fresh.Retry(ctx, sc.Tenant, err, func() (err error) {
			info, err = p.hub.Board(sc.Tenant, m.Board)
			return err
		})
		if err != nil && !errors.Is(err, hub.ErrNotFound) {
			return nil, err // behind its stream still: unavailable
		}
	}
	s := info.Settings
	if err != nil || (s.StartsAt == "" && s.EndsAt == "" && len(s.Prizes) == 0) {
		return nil, nil // the join answers its own error
	}
	return encodeBoard(m.ID, m.Board, s), nil
}
