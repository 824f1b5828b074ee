package hub

import (
	"strconv"
	"sync"
	"testing"
)

// TestQuotaFootprint: the Quota set with SetQuota travels in the events
// (the profile past the limit is refused with ErrLimit), and, with -v,
// the tenant's memory estimate and stream bytes per member are printed:
// how docs/OPERATIONS.md sizes a tenant at its default limits.
func TestQuotaFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2,000 profiles")
	}
	const n = 2000
	h := startHub(t, Config{})
	h.Quotas().SetQuota(func(tenant string) Quota { return Quota{Profiles: n, Aliases: 32, Held: 100_000} })
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, n+1)
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				m := "member-" + strconv.Itoa(i)
				if _, err := h.PutProfile(ctx, "t", m, Profile{Name: "Player " + strconv.Itoa(i), Country: "MT"}); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n + 1 {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	var refused []error
	for err := range errs {
		refused = append(refused, err)
	}
	if len(refused) != 1 {
		t.Fatalf("%d refused, want 1: %v", len(refused), refused)
	}
	wantErr(t, refused[0], ErrLimit)
	u, ok := h.Quotas().Usage("t")
	if !ok || u.Profiles != n || u.Members != n { // the refused event interned no member
		t.Fatalf("usage %+v, %v; want %d profiles and members", u, ok, n)
	}
	sizes, err := h.Quotas().StoreBytes(ctx)
	if err != nil || sizes["t"] == 0 {
		t.Fatalf("store bytes %v, %v", sizes, err)
	}
	t.Logf("%d profiles: memory estimate %d bytes (%.0f per member), stream %d bytes (%.0f per profile event)",
		u.Profiles, u.MemoryBytes, float64(u.MemoryBytes)/float64(u.Members), sizes["t"], float64(sizes["t"])/float64(n))
}
