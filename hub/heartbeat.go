package hub

import "context"

// TenantBeat is how this node stands for one tenant: what a live
// connection's heartbeat tells the tenant's clients (PROTOCOL.md,
// "Heartbeats").
type TenantBeat struct {
	// Applied is the stream sequence of the tenant's last event applied on
	// this node (TenantStats.Applied); 0 where none is.
	Applied uint64
	// Writable is false while the tenant's writes fail here without a
	// NATS round trip: it failed to open (isolate.go), its last write
	// failed after its whole WriteTimeout (TenantStats.Writable), or its
	// copy here diverged and is being rebuilt (fingerprints.go). The
	// store's own state is Writable's (the Hub's method), for all tenants.
	Writable bool
}

// Beat returns tenant's TenantBeat on this node. A tenant with no open
// replica here, and not down, is writable (a write opens it) at Applied 0.
// O(1): a read-locked map lookup or two and three atomic loads, no NATS call;
// safe for concurrent use.
func (h *Hub) Beat(tenant string) TenantBeat {
	if r := h.reg.lookup(tenant); r != nil {
		return TenantBeat{Applied: r.applied.Load(), Writable: !r.down.Load() && r.fp.diverged.Load() == 0}
	}
	return TenantBeat{Writable: h.reg.downErr(tenant) == nil}
}

// AwaitApplied waits until this node has applied tenant's stream up to
// seq, ctx ends, or the Hub closes (ErrClosed): woken by the apply that
// reaches seq, never by polling (internal/applywait); ErrUnavailable at
// once where too many calls wait for the tenant already. A tenant not
// open here waits for its opening (by discovery, or a write; never by
// this call), woken by each replica's registration: rare, so a waiter
// looks again at most once per tenant opened meanwhile. Cost: O(log
// waiters) to enter and to leave. Safe for concurrent use.
func (h *Hub) AwaitApplied(ctx context.Context, tenant string, seq uint64) error {
	for {
		r, opened := h.reg.lookupOrOpened(tenant)
		if r != nil {
			return r.waitApplied(ctx, seq)
		}
		select {
		case <-opened:
		case <-ctx.Done():
			return ctx.Err()
		case <-h.ctx.Done():
			return ErrClosed
		}
	}
}

// StreamOf names tenant's JetStream stream, for a readiness probe that
// asks the stream's leader for its last sequence (cmd/gateway). tenant is
// a validated name.
func StreamOf(tenant string) string { return streamName(tenant) }
