package auth

import (
	"maps"
	"slices"
)

// KeyChanges is what replacing one Keyring by another changes, for the
// reload's log line and for closing what the old keys let in. Every list
// is sorted.
type KeyChanges struct {
	AddedTenants   []string // tenants only the new keyring has
	RemovedTenants []string // tenants only the old keyring has
	// AddedKeys are kids the new keyring verifies with keys the old did not
	// have: new kids, and kids whose alg, tenant or key material changed.
	AddedKeys []string
	// RemovedKeys are kids whose tokens the new keyring no longer verifies:
	// kids it lacks, and kids whose alg, tenant or key material changed.
	RemovedKeys []string
}

// Changed reports whether c holds any change.
func (c KeyChanges) Changed() bool {
	return len(c.AddedTenants)+len(c.RemovedTenants)+len(c.AddedKeys)+len(c.RemovedKeys) > 0
}

// CompareKeys returns what replacing old by next changes. Limits are not
// compared: the caller applies next's in full. Nil stands for an empty
// keyring. Cost: O((K + T) log(K + T)) for K keys and T tenants of both,
// and one key encoding per public key present in both.
func CompareKeys(old, next *Keyring) KeyChanges {
	old, next = orEmpty(old), orEmpty(next)
	var c KeyChanges
	c.AddedTenants = missingFrom(next.limits, old.limits)
	c.RemovedTenants = missingFrom(old.limits, next.limits)
	for _, kid := range slices.Sorted(maps.Keys(old.keys)) {
		if n, ok := next.keys[kid]; !ok || !sameKey(old.keys[kid], n) {
			c.RemovedKeys = append(c.RemovedKeys, kid)
		}
	}
	for _, kid := range slices.Sorted(maps.Keys(next.keys)) {
		if o, ok := old.keys[kid]; !ok || !sameKey(o, next.keys[kid]) {
			c.AddedKeys = append(c.AddedKeys, kid)
		}
	}
	return c
}

// Holds reports whether k has the key kid and it belongs to tenant: whether
// a Scope verified with that key would still be let in. A kid that is not
// in the file but whose tenant names a jwks_url is held: the key set, not
// the file, decides it (a token's expiry bounds a session it let in). O(1).
func (k *Keyring) Holds(kid, tenant string) bool {
	key, ok := k.keys[kid]
	if !ok {
		return k.jwks[tenant] != ""
	}
	return key.Tenant == tenant
}

func orEmpty(k *Keyring) *Keyring {
	if k == nil {
		return &Keyring{}
	}
	return k
}

// missingFrom returns the keys of a that b lacks, sorted.
func missingFrom[V any](a, b map[string]V) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(a)) {
		if _, ok := b[name]; !ok {
			out = append(out, name)
		}
	}
	return out
}

// sameKey reports whether a and b verify the same tokens.
func sameKey(a, b Key) bool {
	return a.ID == b.ID && a.Alg == b.Alg && a.Tenant == b.Tenant && materialID(a.verify) == materialID(b.verify)
}
