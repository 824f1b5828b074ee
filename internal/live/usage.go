package live

// ConnectionCap returns tenant's connection cap: its key file entry's, or
// Options.MaxConnections, or DefaultMaxConnections. O(1).
func (p *Plane) ConnectionCap(tenant string) int { return p.connCap(tenant) }

// Usage returns tenant's connections on this plane and their subscriptions
// by board, for GET /v1/tenant. O(connections): it takes p.mu, then each
// of the tenant's connections' mu in turn, never two at once.
func (p *Plane) Usage(tenant string) (conns int, subs map[string]int) {
	subs = map[string]int{}
	p.mu.Lock()
	conns = p.tenants[tenant]
	p.mu.Unlock()
	for _, c := range p.connections() {
		if sc, ok := c.current(); !ok || sc.Tenant != tenant {
			continue
		}
		for _, b := range c.boards() {
			subs[b]++
		}
	}
	return conns, subs
}
