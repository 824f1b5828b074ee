package live

// ConnectionCap returns tenant's connection cap: its key file entry's, or
// Options.MaxConnections, or DefaultMaxConnections. O(1).
func (p *Plane) ConnectionCap(tenant string) int { return p.connCap(tenant) }

// Usage returns tenant's connections on this plane and their subscriptions
// by board, for GET /v1/tenant. O(connections): it takes p.mu, then each
// of the tenant's connections' mu in turn, never two at once.
func (p *Plane) Usage(tenant string) (conns int, subs map[string]int) {
	p.mu.Lock()
	conns = p.tenants[tenant]
	p.mu.Unlock()
	_, subs = p.UsageIn(tenant, nil)
	return conns, subs
}

// UsageIn is Usage over the boards keep accepts (nil: every board), for a
// token limited to boards: subs counts only those boards, conns only the
// connections (WebSockets and event streams) with a subscription to one of
// them, so that nothing counts what happens on a board the caller does not
// reach. O(connections), with Usage's locking.
func (p *Plane) UsageIn(tenant string, keep func(board string) bool) (conns int, subs map[string]int) {
	subs = map[string]int{}
	for _, c := range p.connections() {
		if sc, ok := c.current(); !ok || sc.Tenant != tenant {
			continue
		}
		n := 0
		for _, b := range c.boards() {
			if keep == nil || keep(b) {
				subs[b]++
				n++
			}
		}
		if n > 0 || keep == nil {
			conns++
		}
	}
	return conns, subs
}
