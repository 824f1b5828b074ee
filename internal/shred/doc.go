// Package shred is crypto-shredding for members' personal data: a random
// AES-256 key per member of a tenant, kept in the JetStream stream
// Stream (one message per key), with which the hub seals the personal fields of the
// events it logs (a profile, linked aliases) and the notifier the names in
// the notifications it stores (internal/notify); erasing a member destroys its
// key, so that every copy of those events (the stream on every node, the
// replicas, the backups taken since) turns unreadable at once. It also
// wipes what erasure must not leave behind in other streams: the
// superseded snapshot objects (Wipe) and the notifications that named the
// member (Scrub), through JetStream's secure delete, which overwrites a
// message's bytes on disk rather than only marking it deleted.
//
// # Keys
//
// A key's subject is named after a SHA-256 of the tenant and the member
// id (never the id itself: no subject names a member), holds 32 random bytes, and is created once (two nodes sealing
// for a new member at once both end up with the one that was created
// first). Destroy leaves an empty message, a tombstone, on the subject:
// Seal (new personal data: a profile put after the erasure) replaces it
// with a new key, SealKept (a copy of data given before: a name in a
// notification built before the erasure applied) seals nothing. Keys are
// cached in memory per Keys (32 bytes and the entry name per member that
// has one; a key a snapshot sealed with is also kept ready, its cipher and
// HMAC states: about 900 bytes per member with personal data, fixed.go);
// Forget drops a member's from the cache, which
// every node does when it applies the erasure. A sealed value is
// 0x01 | 12-byte random nonce | AES-GCM ciphertext and tag, with the
// tenant and owner as associated data: a value moved to another tenant or
// member does not open. Snapshots seal the members' personal data with the
// same keys and format (Ring, a ledger.Keyring), the nonce derived from the
// key and the value instead of drawn (fixed.go), so that every node writes
// the same snapshot bytes.
//
// # What erasure cannot reach
//
// Destroy overwrites the key's message on every replica. On a cluster, each replica's Raft log of the stream keeps the
// proposal that created the key until the log is compacted: the hub has
// its embedded server compact it once it applied the erasure
// (internal/raftcompact), else JetStream does (about every two minutes,
// and when the node stops). A backup of the
// stream taken before the erasure holds the key: docs/OPERATIONS.md says
// how a restore re-applies erasures.
//
// A node seals with the key it caches. Between an erasure's Destroy on
// one node and another node's application of the erasure (when it forgets
// the key), that other node could still seal a new profile of the member
// with the destroyed key; logged after the erasure, it would open on that
// node and nowhere else (a name in a notification sealed with it likewise
// opens for that node's deliveries). The window is the erasure's commit and fetch
// (milliseconds); an operator erasing a member is not expected to set its
// profile at the same moment through another gateway.
//
// Safe for concurrent use.
package shred
