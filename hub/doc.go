// Package hub is the NATS half of rankwire and the Hub facade over it: the
// connection (an embedded nats-server with JetStream, alone or clustered,
// or an external one), one JetStream stream per tenant and the log around
// it (streamLog: create and resize streams, group commit and publish with
// retries through a leader change, follow a stream with a consumer of its
// own, the audit replay), the tenants' registry (open, opening, down,
// discovered), one replica per tenant that applies its stream, snapshot
// files and the cluster's snapshot bucket (internal/snapbucket), the
// store's health and the API gate. It owns a notify.Notifier (package
// internal/notify, which publishes the notifications' stream) and hands it
// what each apply decided through the replica's notify.Tenant. What a
// tenant's state is, and how an event changes it, is package
// internal/ledger: a pure function of the events that the replica applies
// (doc.go there).
//
// What it may import is internal/layering's table; it knows nothing of
// HTTP, JWT or WebSockets. Callers (api) validate tenant and board names;
// hub checks them again only because they become parts of NATS subjects.
//
// # Layout
//
// Tenant t has the stream RW_t with the one subject rw.t.ev. Every event of
// the tenant goes there, because an identity merge is tenant-wide and every
// board must see it at the same point of the stream. The stream is the
// source of truth: file storage, no age limit, DenyDelete and DenyPurge.
// The acceptance time is stamped into each event at ingest (Config.Now);
// apply never reads a clock, so two hubs that replay the same stream hold
// byte-identical states.
//
// # Goroutines
//
// Per tenant: the replica goroutine, the only writer of the tenant's
// ledger.State; its fetcher, which decodes events ahead of it, and the
// fetcher's watchdog (follow.go, internal/streamfollow); its saver, which
// writes its snapshots and shares the agreed ones (snapbucket.Agreement);
// its committer, which publishes its Submit calls in groups
// (committer.go); and, while a group event writes several boards, the
// goroutines of its lanes (lanes.go), which the replica waits for. Per
// Hub: the feed, the notifier (notify.Notifier.Run), the re-opener of down
// tenants, the discoverer, the disk watch (internal/diskwatch), and while
// they have not succeeded the retries of the snapshot bucket and of the
// streams' replica count; at start, a few openings at once (openAll). All
// stop when the Hub's context ends, and Close waits for them.
//
// # Locks
//
// In order: registry.openMu, registry.mu, replica.mu, then the ledger feed
// log's mutex, the notifier's mutex and replica.waits' (none of these three
// is held while taking another). apiGate.mu is taken with no other held.
//
//   - registry.openMu (tenant.go): read-held by each opening of a tenant
//     for its whole length, NATS round trips and replay included, so that
//     Close (write lock) waits for the openings in flight.
//   - registry.mu: the open replicas, the openings in flight, the down
//     marks, closed. Never held across a NATS call.
//   - replica.mu: guards the tenant's ledger.State. The replica goroutine
//     holds it for writing while it applies an event and lets go every 64
//     items (ledger.SetYield); the lanes of a group event run under it.
//     Readers hold it for reading for one read (read.go).
//   - the feed log's mutex (internal/ledger/feed.go): apply appends, the
//     feed goroutine takes, under replica.mu.
//   - the notifier's mutex (internal/notify): its queues, ids published,
//     drops and bytes stored; taken under a replica's read lock when the
//     ledger asks what was published, never across a NATS round trip.
//   - replica.waits' mutex (internal/applywait): the calls waiting for an
//     event's apply or a sequence; AwaitApplied waits there.
//   - apiGate.mu (apigate.go): read-held across every JetStream API request
//     of the Hub, a NATS round trip (bounded by the request's context); a
//     restart of the embedded JetStream holds it for writing while it
//     restarts, so it waits for the requests in flight. A request never
//     waits for the gate: while a restart holds it, it fails at once.
//
// Besides openMu's read lock and the gate's, no lock is held across a NATS
// round trip. Opening, replaying or reading one tenant never holds a lock
// another tenant needs: registry.mu only for map lookups. Publishes retry
// with one message id per event for up to Config.WriteTimeout (publish.go).
package hub
