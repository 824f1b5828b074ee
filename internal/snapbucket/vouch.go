package snapbucket

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/ledger"
)

// What a clustered node may open a tenant from. Its own snapshot file is
// checked by a CRC only, which whoever changed the file (or bit rot before
// the write, in memory) may have made right: a score changed in a way
// that still decodes would be served until the cluster's next checkpoint
// showed this node's copy wrong, and never on an idle tenant. So a
// clustered node starts only from a state a checkpoint the majority of the
// cluster agreed with vouches for: the newest such checkpoint is the one
// the bucket's object names where it is marked agreed (agree.go: nothing
// else is shared by a clustered node), and a state is its state where it
// is at that sequence and hashes to that sum.

// ErrUnvouched is Vouched's error where a clustered node's snapshot file
// holds a state no checkpoint the cluster agreed with vouches for, and the
// bucket holds none it could start from instead: the caller replays the
// tenant's stream from its first event.
var ErrUnvouched = errors.New("snapbucket: no checkpoint the cluster agreed with vouches for this node's snapshot file, and no agreed shared snapshot passed its check")

// Vouched returns the state a clustered node opens tenant from (Newer with
// agreed set): local, the state in its own snapshot file, where the
// bucket's newest agreed checkpoint is local's (same sequence, same hash:
// nothing is downloaded); else the agreed shared snapshot, where it passes
// Load's check; else localErr where the file could not be read, or an
// error wrapping ErrUnvouched where it held a state (the caller logs it and
// replays the tenant's stream from its first event). A nil s (no bucket
// open yet) vouches for nothing but an empty state. Cost: one request for
// the object's info, whose answer both the vouching and the download take,
// and one encoding of local where the object's checkpoint is at its
// sequence, Load's download and check otherwise. Where that request got
// no answer (not "no such object"), the download is Load's, which asks
// again: a request to a replica that drops it (one still catching up)
// times out, and the next may reach one that answers, as it did when
// vouching and loading each asked. Bounded by Timeout for the info and
// Timeout again for Load.
func (s *Bucket) Vouched(ctx context.Context, tenant string, local *ledger.State, localErr error, kr ledger.Keyring) (*ledger.State, error) {
	if s != nil {
		ictx, cancel := context.WithTimeout(ctx, Timeout)
		info, err := s.info(ictx, tenant)
		cancel()
		if err == nil && localErr == nil && local.Seq() > 0 && vouches(info, local) {
			s.log.Info("hub: snapshot file checked against the checkpoint the cluster agreed with", "tenant", tenant, "seq", local.Seq())
			return local, nil
		}
		if st, ok := s.loadVouched(ctx, tenant, look{info, err}, kr); ok {
			return st, nil
		}
	}
	if localErr != nil || local.Seq() == 0 {
		return local, localErr
	}
	return nil, fmt.Errorf("%w (the file is at seq %d)", ErrUnvouched, local.Seq())
}

// loadVouched is Load of the agreed shared snapshot after Vouched's look
// l at its info: that answer taken where it came (the object's info, or
// none such), asked again where it did not. Bounded by Timeout.
func (s *Bucket) loadVouched(ctx context.Context, tenant string, l look, kr ledger.Keyring) (*ledger.State, bool) {
	if l.err != nil && !errors.Is(l.err, jetstream.ErrObjectNotFound) {
		return s.Load(ctx, tenant, 0, kr, true)
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	return s.loadAfter(ctx, tenant, l, 0, kr, true)
}

// vouches reports whether info, the bucket's object of a tenant, names as
// agreed by a majority the checkpoint of st: at st's sequence, with st's
// hash (the object's check, check.go, on its info alone: nothing
// downloaded).
func vouches(info *jetstream.ObjectInfo, st *ledger.State) bool {
	obj := object{meta: info.Metadata}
	obj.seq, _ = strconv.ParseUint(info.Metadata[metaSeq], 10, 64)
	return obj.check(st, true) == nil
}
