package hub

import (
	"io"
	"log/slog"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rankwire/rankwire/internal/natsconf"
)

// Config configures a Hub. The zero Config starts an embedded NATS server
// under ./data and logs nowhere.
type Config struct {
	// DataDir holds the embedded JetStream store (DataDir/nats) and the
	// snapshots (DataDir/snapshots). Zero means "./data".
	DataDir string

	// NATSURL is an external NATS server or cluster with JetStream. Empty
	// means: start an embedded nats-server that listens on no port; the Hub
	// talks to it in-process, so nothing else can reach it.
	NATSURL string

	// Logger receives operational logs. Nil means discard.
	Logger *slog.Logger

	// Now stamps the acceptance time of events at ingest; apply never
	// calls it. Nil means time.Now. Tests inject a clock here.
	Now func() time.Time

	// SnapshotEvery spaces a tenant's snapshots: one at every multiple of
	// it in stream sequence. Zero means 100,000; negative disables periodic snapshots
	// (Close still writes them). A snapshot stops the tenant's apply while
	// it encodes the state (about 0.18 s at 1 M members, BenchmarkSnapshot;
	// reads go on), and bounds the replay at restart: at most SnapshotEvery events, or
	// SnapshotInterval's worth.
	SnapshotEvery int

	// SnapshotInterval is the longest time between two snapshots of a
	// tenant whose state changes, whichever of it and SnapshotEvery comes
	// first. Zero means 5 minutes; negative means no time limit.
	SnapshotInterval time.Duration

	// PushInterval bounds how long the change feed gathers changes while
	// its Feed (SetFeed) is busy: at idle a change is handed on at once,
	// under load the pause after a drain makes the drain and the pause at
	// most half busy, at least 1 ms and at most this (feed.go). Zero means
	// 100 ms.
	PushInterval time.Duration

	// DiscoverInterval is how often the Hub looks for tenant streams that
	// another gateway sharing the NATS cluster created, and starts their
	// replicas, besides looking whenever JetStream announces a new stream
	// (normally within milliseconds; the poll catches an announcement
	// missed during a reconnect). Zero means 5 s; negative means only at
	// start, and no announcements either.
	DiscoverInterval time.Duration

	// MaxStore is how many bytes the embedded JetStream server may store.
	// Past it writes fail with ErrStoreFull until space is freed (a stream
	// deleted); no restart is needed. Zero means NATS's default: 75 % of
	// the free disk space at start. Ignored with NATSURL.
	MaxStore int64

	// WriteTimeout is how long a write may wait for JetStream, retrying
	// with the same message id through a leader change, before it fails
	// with ErrUnavailable (publish.go). Zero means 10 s; values above
	// MaxWriteTimeout (the duplicate window's margin) count as it.
	WriteTimeout time.Duration

	// IdempotencyRetention is how long a board keeps a submission's
	// idempotency id: a repeat later than that applies again. Zero means
	// for ever. It travels in each submission's event, so apply decides
	// in stream order and every node forgets the same ids (seen.go).
	// Non-zero values below MinIdempotencyRetention count as it.
	IdempotencyRetention time.Duration

	// Cluster makes the embedded server join a NATS cluster (Cluster.Name
	// set), and may open an authenticated client listener. Ignored with
	// NATSURL, where Cluster.Secret (if set) supplies the user and password
	// of the client listener of a clustered gateway (--nats-listen).
	Cluster Cluster

	// NATSAuth is how the Hub authenticates to NATSURL: a credentials file
	// and TLS files. Ignored without NATSURL.
	NATSAuth NATSAuth

	// JSDomain is the JetStream domain of the servers that hold the
	// streams, for a gateway whose NATSURL is a leaf node without
	// JetStream of its own (a region attached to a central cluster: its
	// API requests then go to $JS.<domain>.API). Empty: the account's own
	// JetStream. Ignored without NATSURL.
	JSDomain string

	// Replicas is the JetStream replica count of every tenant's stream: 1,
	// 3 or 5. Streams are created with it, and existing streams are brought
	// to it at start where it was given or the embedded server is clustered
	// (an external cluster's streams that an operator raised by hand are not
	// lowered to a default). Zero means 1 alone and 3 with Cluster.Name.
	Replicas int
	// replicasGiven records that Replicas was set, not defaulted.
	replicasGiven bool

	// Sync is the embedded JetStream's fsync policy. Zero and SyncAlways
	// fsync every write before acknowledging it (group commit makes
	// concurrent Submit calls share one event, hence one fsync). A positive
	// duration is an opt-out: writes are acknowledged once in the page
	// cache and fsynced every Sync, so a power loss or kernel crash loses
	// up to the last interval of acknowledged submissions (SyncLazy is
	// NATS's own default, 2 minutes). Ignored with NATSURL.
	Sync time.Duration

	// Fingerprints, where set, receives every replica's checkpoints and
	// takes a tenant whose copy diverged out of service until it is rebuilt
	// (fingerprints.go). Nil: no fingerprints.
	Fingerprints *Fingerprints
	// Embedded, where not nil, is given the embedded server once it runs,
	// before the Hub waits for its cluster: for the owner's cluster metrics
	// (cmd/gateway reads its JetStream state). It must not shut the server
	// down or change it. Ignored with NATSURL.
	Embedded func(*server.Server)
	// ReplicaID, where set, is this process's id in the names of its
	// replicas' consumers (rw_<ReplicaID>_<tenant>_<n>) and in its message
	// ids, so that the owner can tell them apart (a stopping node deletes
	// the other nodes' consumers it hosts, not its own); random and new
	// for every process, as the Hub's own is. Empty: the Hub makes one.
	ReplicaID string
}

const (
	// SyncAlways is Config.Sync's value for "fsync before every
	// acknowledgement", the same as zero.
	SyncAlways time.Duration = -1
	// SyncLazy is nats-server's default sync interval, the opt-out that
	// --sync lazy names: up to 2 minutes of acknowledged writes are at risk
	// on power loss.
	SyncLazy = 2 * time.Minute
)

// Cluster is the embedded server's place in a NATS cluster; RouteTLS and
// ClientTLS are its listeners' TLS files; NATSAuth holds the files that
// authenticate the Hub to an external NATS (package internal/natsconf
// builds the libraries' options from them).
type (
	Cluster   = natsconf.Cluster
	RouteTLS  = natsconf.RouteTLS
	ClientTLS = natsconf.ClientTLS
	NATSAuth  = natsconf.NATSAuth
)

func (c Config) withDefaults() Config {
	if c.DataDir == "" {
		c.DataDir = "./data"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.SnapshotEvery == 0 {
		c.SnapshotEvery = 100_000
	}
	if c.DiscoverInterval == 0 {
		c.DiscoverInterval = 5 * time.Second
	}
	if c.SnapshotInterval == 0 {
		c.SnapshotInterval = 5 * time.Minute
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 10 * time.Second
	}
	c.WriteTimeout = min(c.WriteTimeout, MaxWriteTimeout)
	if c.IdempotencyRetention > 0 {
		c.IdempotencyRetention = max(c.IdempotencyRetention, MinIdempotencyRetention)
	}

	c.replicasGiven = c.replicasGiven || c.Replicas != 0
	if c.Replicas == 0 {
		c.Replicas = 1
		if c.Cluster.Name != "" && c.NATSURL == "" {
			c.Replicas = 3
		}
	}
	if c.PushInterval <= 0 {
		c.PushInterval = 100 * time.Millisecond
	}
	return c
}
