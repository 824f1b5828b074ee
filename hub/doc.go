// Package hub owns rankwire's durable log and the replicas built from it: the
// NATS connection (an embedded nats-server with JetStream, or an external
// one), one JetStream stream per tenant, the submit path (group commit,
// publish, wait for the ack, wait for the local replica), the per-tenant
// replica loops that
// apply events to identity indexes and board-windows, windows and their
// retention, idempotency ids, and snapshots.
//
// It may import board, identity and the nats-io modules only (plus the
// standard library); it knows nothing of HTTP, JWT or WebSockets. Inner
// callers (api) validate tenant and board names; hub checks them again only
// because they become parts of NATS subjects.
//
// # Layout
//
// Tenant t has the stream RW_t with the one subject rw.t.ev. Every event of
// the tenant (board settings, submissions, identity links, removals, resets,
// deletions) goes there, because an identity merge is tenant-wide and every
// board must see it at the same point of the stream. The stream is the
// source of truth: file storage, no age limit, DenyDelete and DenyPurge.
//
// # Determinism
//
// A replica is a deterministic function of the stream: the acceptance time
// is stamped into each event at ingest (Config.Now) and apply never reads the
// wall clock; a submission's reached-at sequence is its event's stream
// sequence; no result depends on map iteration order. Two hubs that replay
// the same stream hold byte-identical boards.
//
// # Concurrency
//
// Each tenant has one replica goroutine, the only writer of the tenant's
// state, fed by a fetcher goroutine that decodes events ahead of it and
// helped by a saver goroutine that writes its snapshots; readers take the
// replica's read lock (RWMutex) for the duration of one read, and the
// replica releases its write lock every applySlice items of a batch, so a
// read waits for one slice, never a whole event. Each tenant also has one
// committer goroutine that publishes the tenant's Submit calls in groups
// (committer.go). Lock order: Hub.openMu, then Hub.mu, then replica.mu, then
// replica.waitMu. No lock is held across a NATS round trip except openMu's
// read lock, which each opening of a tenant holds so that Close can wait
// for them; tenants open concurrently, one opening per tenant shared by its
// callers (tenant.go), each NATS call bounded by callTimeout, and a tenant
// that failed to open answers from Hub.down (isolate.go). Hub.mu guards the down marks
// with the tenants. Publishes retry with one message id per event for up
// to Config.WriteTimeout (publish.go).
package hub
