package hub

// TenantBeat is how this node stands for one tenant: what a live
// connection's heartbeat tells the tenant's clients (PROTOCOL.md,
// "Heartbeats").
type TenantBeat struct {
	// Applied is the stream sequence of the tenant's last event applied on
	// this node (TenantStats.Applied); 0 where none is.
	Applied uint64
	// Writable is false while the tenant's writes fail here without a
	// NATS round trip: it failed to open (isolate.go), or its last write
	// failed after its whole WriteTimeout (TenantStats.Writable). The
	// store's own state is Writable's (the Hub's method), for all tenants.
	Writable bool
}

// Beat returns tenant's TenantBeat on this node. A tenant with no open
// replica here, and not down, is writable (a write opens it) at Applied 0.
// O(1): a read-locked map lookup or two and two atomic loads, no NATS call;
// safe for concurrent use.
func (h *Hub) Beat(tenant string) TenantBeat {
	if r := h.reg.lookup(tenant); r != nil {
		return TenantBeat{Applied: r.applied.Load(), Writable: !r.down.Load()}
	}
	return TenantBeat{Writable: h.reg.downErr(tenant) == nil}
}

// StreamOf names tenant's JetStream stream, for a readiness probe that
// asks the stream's leader for its last sequence (cmd/gateway). tenant is
// a validated name.
func StreamOf(tenant string) string { return streamName(tenant) }
