package hub

import (
	"slices"
	"strings"
	"time"
)

// TenantStats is one tenant's replica as metrics see it.
type TenantStats struct {
	Tenant   string
	Applied  uint64        // stream sequence of the last applied event
	Start    uint64        // stream sequence of the snapshot the replica started from; 0: the stream's start
	ApplyLag time.Duration // from the last applied event's storing to its apply
	Boards   []BoardInfo   // with the size of each board's current primary window
	Writable bool          // false while its writes fail fast: the last one failed after the whole WriteTimeout
}

// Stats returns every open tenant's replica state, sorted by tenant. Cost:
// a read lock per tenant, O(boards). Safe for concurrent use.
func (h *Hub) Stats() []TenantStats {
	rs := h.reg.openReplicas()
	slices.SortFunc(rs, func(a, b *replica) int { return strings.Compare(a.tenant, b.tenant) })
	out := make([]TenantStats, 0, len(rs))
	for _, r := range rs {
		name := r.tenant
		out = append(out, TenantStats{
			Tenant: name, Applied: r.applied.Load(), Start: r.startSeq,
			ApplyLag: time.Duration(r.lag.Load()), Boards: h.Boards(name), Writable: !r.down.Load(),
		})
	}
	return out
}

// Connected reports whether the Hub's NATS connection is up: readiness
// turns false while the client reconnects to an external cluster. Safe for
// concurrent use.
func (h *Hub) Connected() bool { return h.nc != nil && h.nc.IsConnected() }
