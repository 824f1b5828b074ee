// Package identity owns one tenant's identifiers: external member ids, the
// aliases that name the same person ("email:ann@x.io", "device:42"), the
// dense uint32 handles that boards rank instead of strings, and the merges
// that collapse two members into one when an alias links them.
//
// It imports only the standard library: it knows nothing of boards, NATS,
// HTTP or JSON.
//
// # Handles
//
// Intern and Link give each new member id the next handle in first-seen
// order, starting at 1. Handle 0 is never assigned and means "none", so a
// zeroed field can never be mistaken for a member. Handles are never reused:
// a merge retires a handle for good, and later members get new numbers.
// MaxHandle bounds every handle ever assigned, so a caller may index dense
// slices by handle.
//
// # Identifiers
//
// Member ids and aliases share one namespace: each identifier resolves to
// exactly one live handle, and wherever a member id is accepted an alias is
// accepted too and resolves to its member. An identifier is 1 to 128 bytes
// of valid UTF-8 without control characters (Validate). Intern and Link
// validate what they store; Resolve of anything invalid simply misses.
//
// # Merges
//
// Link(member, aliases) links each alias to member's handle. An alias that
// already resolves to another live handle merges that handle into member's:
// every identifier of the other handle (its id and all its aliases) now
// resolves to member's handle, and the other handle is retired. The retired
// handle's external id becomes an alias of the survivor, so Aliases lists it
// and Canonical maps the retired handle to the survivor. Link reports each
// merge as a Merge{From, Into} so the caller can fold board entries. If member
// is itself an alias, it stands for the member it resolves to: the aliases
// are linked to that member and the merges go into it.
//
// A merge costs O(the smaller of the two members' alias sets), not
// O(identifiers moved): aliases point at a set, the set at its live handle,
// and a merge relabels the smaller set (union by size). A back end that
// links one placeholder alias to every new member, merging everyone so far
// into each newcomer, costs O(1) per link rather than O(members).
//
// # Determinism
//
// The same sequence of calls gives the same handles, the same merges and the
// same snapshot bytes on every node. The hash table's seed is random per
// Index (against hash flooding by chosen ids) but only decides where entries
// sit in the table; nothing observable iterates the table or a map in map
// order.
//
// # Memory
//
// Each identifier's bytes are stored once: names[h] and the table share one
// string, and the table is an open-addressing array of 8-byte slots (32 bits
// of hash, 32 bits of handle) rather than a map[string]uint32. With 14-byte
// ids, BenchmarkBytesPerMember measures about 48 bytes of heap per member at
// 1,000,000 members (a 16-byte string header plus slice slack, 16 bytes of
// string in its size class, 16 of table at 48% load), against about 95 for
// the obvious []string plus map[string]uint32 in the same run. Each alias
// adds about 110 bytes with 25-byte aliases (32 string, 24 record, 16 table,
// the rest its member's set and the set index). Ids loaded by Decode share
// one copy of the snapshot and cost their length plus a varint byte or two.
//
// The table doubles when three quarters full; that one insert rehashes from
// the stored hash bits without touching the strings, about 15 ms per million
// identifiers on the 2-core development machine.
//
// # Concurrency
//
// An Index has one owning goroutine that writes it (Intern, Link,
// UnmarshalBinary). The read methods (Resolve, Name, Canonical, Aliases,
// Compare, Len, MaxHandle, AppendBinary, MarshalBinary, Check) write
// nothing, not even scratch space, so any number of goroutines may read at
// once while no write runs: the contract of a Go map. A caller that mixes
// readers with a writer guards the Index with a sync.RWMutex.
package identity
