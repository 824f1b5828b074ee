package live

import (
	"log/slog"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/refusal"
	"github.com/rankwire/rankwire/wire"
)

// CloseRevoked closes with 4003 every authenticated connection whose
// token's key is among removed or is not held by next for its tenant, and
// returns how many: api's ReloadKeys calls it after swapping the
// Verifier's keys. The closes run on goroutines of their own: a close
// handshake may wait on a slow peer. O(connections).
func (p *Plane) CloseRevoked(next *auth.Keyring, removed []string) int {
	gone := make(map[string]bool, len(removed))
	for _, kid := range removed {
		gone[kid] = true
	}
	n := 0
	for _, c := range p.connections() {
		sc, authed := c.current()
		if authed && (gone[sc.Kid] || !next.Holds(sc.Kid, sc.Tenant)) {
			n++
			p.refusals.Refused(refusal.Token, slog.String("err", "key removed"), slog.String("tenant", sc.Tenant), slog.String("kid", sc.Kid))
			go c.close(keyRemovedClose)
		}
	}
	return n
}

// keyRemovedClose ends a connection whose token's key a reload removed.
var keyRemovedClose = newClose(wire.CloseForbidden, "token refused: key removed")

// closeIfRevoked closes c with 4003 where the key of its scope sc is no
// longer in the Verifier's keyring, and reports whether it did. A reload
// that swapped the keys while sc was being verified missed c in its
// sweep (CloseRevoked) only if c installed sc after the sweep read it,
// hence after the swap: so c, calling this after installing sc, sees the
// new keys. O(1).
func (c *wsConn) closeIfRevoked(sc auth.Scope) bool {
	if k := c.p.verifier.Keyring(); k.Holds(sc.Kid, sc.Tenant) {
		return false
	}
	c.p.refusals.Refused(refusal.Token, slog.String("err", "key removed"), slog.String("tenant", sc.Tenant), slog.String("kid", sc.Kid))
	c.close(keyRemovedClose)
	return true
}
