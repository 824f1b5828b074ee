package api

import "github.com/rankwire/rankwire/auth"

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
	for _, l := range []*limiters{s.limits, s.boardW, s.identW} {
		l.relimit()
	}
	closed := s.live.CloseRevoked(next, changes.RemovedKeys)
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
