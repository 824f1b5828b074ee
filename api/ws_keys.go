package api

import (
	"log/slog"

	"github.com/rankwire/rankwire/auth"
)

// ReloadKeys makes next the keyring of every check from now on (the
// gateway calls it on SIGHUP): the Verifier's keys, each tenant's limits
// (connections, submissions_per_second, boards) and the refusal logs.
// Tokens of keys next lacks are refused from then on, and each live
// WebSocket whose token's key was removed or replaced, or whose tenant was
// removed, closes with 4003. A connection already over a lowered
// connection cap stays; new ones wait below it. It returns what changed,
// for the caller's log. Nil next is refused with auth.ErrKeyFile and
// changes nothing. Safe for concurrent use: reloads run one at a time, and
// no request waits for one (the swap is atomic). Cost: the
// Verifier's Swap, O(tenants with a rate bucket) and O(connections).
func (s *Server) ReloadKeys(next *auth.Keyring) (auth.KeyChanges, error) {
	s.reload.Lock() // the Verifier's and the limits' keyrings stay one
	defer s.reload.Unlock()
	old, err := s.cfg.Verifier.Swap(next)
	if err != nil {
		return auth.KeyChanges{}, err
	}
	s.keys.Store(next)
	changes := auth.CompareKeys(old, next)
	s.limits.relimit()
	closed := s.live.closeRevoked(next, changes.RemovedKeys)
	if closed > 0 {
		s.log.Info("WebSockets closed: their key left the key file", "closed", closed)
	}
	return changes, nil
}

// Keyring returns the keyring in use: Config.Keys until a ReloadKeys, then
// the reloaded one. O(1).
func (s *Server) Keyring() *auth.Keyring { return s.keyring() }

// keyring returns the keyring of limits and refusal logs: Config.Keys
// until a ReloadKeys, then the reloaded one; nil where neither was set
// (every tenant has the defaults). O(1), one atomic load.
func (s *Server) keyring() *auth.Keyring { return s.keys.Load() }

// closeRevoked closes with 4003 every authenticated connection whose
// token's key is among removed or is not held by next for its tenant, and
// returns how many. The closes run on goroutines of their own: a close
// handshake may wait on a slow peer. O(connections).
func (l *live) closeRevoked(next *auth.Keyring, removed []string) int {
	gone := make(map[string]bool, len(removed))
	for _, kid := range removed {
		gone[kid] = true
	}
	l.mu.Lock()
	conns := make([]*wsConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	n := 0
	for _, c := range conns {
		sc, authed := c.current()
		if authed && (gone[sc.Kid] || !next.Holds(sc.Kid, sc.Tenant)) {
			n++
			l.refusals.refused(refusedToken, slog.String("err", "key removed"), slog.String("tenant", sc.Tenant), slog.String("kid", sc.Kid))
			go c.close(keyRemovedClose)
		}
	}
	return n
}

// keyRemovedClose ends a connection whose token's key a reload removed.
var keyRemovedClose = newClose(closeForbidden, "token refused: key removed")

// closeIfRevoked closes c with 4003 where the key of its scope sc is no
// longer in the current keyring, and reports whether it did. A reload
// that swapped the keys while sc was being verified missed c in its
// sweep (closeRevoked) only if c installed sc after the sweep read it,
// hence after the swap: so c, calling this after installing sc, sees the
// new keys. O(1).
func (c *wsConn) closeIfRevoked(sc auth.Scope) bool {
	if k := c.l.s.cfg.Verifier.Keyring(); k.Holds(sc.Kid, sc.Tenant) {
		return false
	}
	c.l.refusals.refused(refusedToken, slog.String("err", "key removed"), slog.String("tenant", sc.Tenant), slog.String("kid", sc.Kid))
	c.close(keyRemovedClose)
	return true
}
