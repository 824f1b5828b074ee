package shred

import (
	"context"
	"encoding/json"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

// SealProfile moves ev.Profile (an EvProfile) into ev.Sealed, sealed under
// owner's key in tenant.
func (k *Keys) SealProfile(ctx context.Context, tenant, owner string, ev *ledger.Event) error {
	pt, err := json.Marshal(ev.Profile)
	if err != nil {
		return err
	}
	ct, err := k.Seal(ctx, tenant, owner, pt)
	if err != nil {
		return err
	}
	ev.Profile, ev.Sealed = nil, &ledger.Sealed{Owner: owner, Profile: ct}
	return nil
}

// SealAliases seals private (aliases that name nobody yet) under owner's
// key in tenant into ev.Sealed (an EvLink). No-op for none.
func (k *Keys) SealAliases(ctx context.Context, tenant, owner string, ev *ledger.Event, private []string) error {
	if len(private) == 0 {
		return nil
	}
	sl := &ledger.Sealed{Owner: owner}
	for _, a := range private {
		ct, err := k.Seal(ctx, tenant, owner, []byte(a))
		if err != nil {
			return err
		}
		sl.Aliases = append(sl.Aliases, ct)
	}
	ev.Sealed = sl
	return nil
}

// unsealRetry is the first wait before reading the keys again.
const unsealRetry = 50 * time.Millisecond

// Unseal fills ev's personal fields from ev.Sealed (ledger.Event.Unseal):
// placeholders where a key is gone; where the keys cannot be read now it
// tries again, with backoff, until ctx ends (then ctx's error). On an
// EvErase it forgets the erased members' keys (ev.Member and ev.Aliases)
// from the cache. No-op for other events.
func (k *Keys) Unseal(ctx context.Context, tenant string, ev *ledger.Event) error {
	if ev.Kind == ledger.EvErase {
		k.Forget(tenant, append([]string{ev.Member}, ev.Aliases...)...)
		return nil
	}
	if ev.Sealed == nil {
		return nil
	}
	plain := len(ev.Aliases)
	for wait := unsealRetry; ; wait = min(2*wait, 5*time.Second) {
		var failed error
		ev.Unseal(func(owner string, ct []byte) ([]byte, bool) {
			pt, ok, err := k.Open(ctx, tenant, owner, ct)
			if err != nil {
				failed = err
			}
			return pt, ok
		})
		if failed == nil {
			return nil
		}
		ev.Profile, ev.Aliases = nil, ev.Aliases[:plain]
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}
