package hub

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/diskwatch"
	"github.com/rankwire/rankwire/internal/natsstats"
	"github.com/rankwire/rankwire/internal/shred"
	"github.com/rankwire/rankwire/internal/streamwatch"
)

// streamLog is the Hub's use of the tenants' JetStream streams, the NATS
// half of every tenant: creating and resizing streams (tenant.go,
// cluster.go), publishing events with their retries through a leader
// change and waiting for the local replica to apply them (write.go,
// committer.go, publish.go), following a stream with a consumer of its own
// (follow.go: internal/streamfollow), replaying one for the audit
// (verify.go); and the embedded store's health (store.go), its leaders' changes (leader.go) and the
// cluster's snapshot bucket (hub.go).
//
// Built once the Hub is connected; its fields are then only read (the
// counters are atomic), so it is safe for concurrent use. The gate api is
// the Hub's: every JetStream API request passes it (apigate.go).
type streamLog struct {
	cfg    Config
	log    *slog.Logger
	srv    *server.Server // nil with Config.NATSURL
	nc     *nats.Conn
	js     jetstream.JetStream
	api    *apiGate
	nstats *natsstats.Counters
	store  *storeHealth
	disk   *diskwatch.Watch      // the embedded store's disk: Full fails writes fast
	snaps  *snapshotter          // the tenants' snapshots: local files, and the cluster's bucket once shared
	quota  *quotas               // the Hub's: the limits stamped on events (quota.go)
	keys   *shred.Keys           // the members' keys: personal fields are sealed in the log (members.go)
	votes  streamwatch.Elections // ends a publish in flight when its stream elects a leader (publish.go)
	linger time.Duration         // the committer's longest wait for more calls: 0 under lazy (committer.go)

	id   string        // prefixes waiter keys and consumer names: unique per Hub
	next atomic.Uint64 // numbers waiter keys

	ctx context.Context // the Hub's: ends at Close
	wg  *sync.WaitGroup // the Hub's: goroutines started here are waited for at Close
}
