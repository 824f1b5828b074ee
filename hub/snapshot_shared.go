package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/ledger"
)

// sharedBucket is the JetStream object store bucket in which every node
// keeps each tenant's newest snapshot, one object per tenant named after
// it, with the stream sequence it was taken at in the object's metadata
// ("seq"). A node that starts with an empty (or older) --data loads the
// newest from there and replays only the stream's tail. Snapshots are
// deterministic, so the one of any node at a sequence is the one of every
// node there.
const sharedBucket = "rankwire_snapshots"

// sharedTimeout bounds one object store call: a slow or missing bucket
// costs a node a longer replay, never a failed start.
const sharedTimeout = 30 * time.Second

// sharedInfoTimeout bounds the look at the bucket before an upload.
const sharedInfoTimeout = 2 * time.Second

// sharedSnapshots is the object store of the tenants' snapshots. Safe for
// concurrent use.
type sharedSnapshots struct {
	store jetstream.ObjectStore
	api   *apiGate // the Hub's: every request to the bucket passes it
	log   *slog.Logger
}

// openSharedSnapshots creates or opens the bucket with replicas copies.
func openSharedSnapshots(ctx context.Context, js jetstream.JetStream, api *apiGate, replicas int, log *slog.Logger) (*sharedSnapshots, error) {
	store, err := gated(api, func() (jetstream.ObjectStore, error) {
		return js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      sharedBucket,
			Description: "rankwire: each tenant's newest snapshot, for nodes that start without one",
			Storage:     jetstream.FileStorage,
			Replicas:    max(replicas, 1),
		})
	})
	if err != nil {
		return nil, fmt.Errorf("hub: snapshot bucket %s: %w", sharedBucket, err)
	}
	return &sharedSnapshots{store: store, api: api, log: log}, nil
}

// seq returns the stream sequence of tenant's shared snapshot, or false
// where there is none (or it cannot be read now).
func (s *sharedSnapshots) seq(ctx context.Context, tenant string) (uint64, bool) {
	info, err := gated(s.api, func() (*jetstream.ObjectInfo, error) { return s.store.GetInfo(ctx, tenant) })
	if err != nil {
		if !errors.Is(err, jetstream.ErrObjectNotFound) {
			s.log.Warn("hub: shared snapshot info", "tenant", tenant, "err", err)
		}
		return 0, false
	}
	seq, err := strconv.ParseUint(info.Metadata["seq"], 10, 64)
	return seq, err == nil
}

// load returns tenant's shared snapshot where it is newer than seq, or
// false.
func (s *sharedSnapshots) load(ctx context.Context, tenant string, seq uint64) (*ledger.State, bool) {
	ctx, cancel := context.WithTimeout(ctx, sharedTimeout)
	defer cancel()
	if shared, ok := s.seq(ctx, tenant); !ok || shared <= seq {
		return nil, false
	}
	data, err := gated(s.api, func() ([]byte, error) { return s.store.GetBytes(ctx, tenant) })
	if err != nil {
		s.log.Warn("hub: shared snapshot not loaded", "tenant", tenant, "err", err)
		return nil, false
	}
	st, err := ledger.Decode(data)
	if err != nil {
		s.log.Warn("hub: shared snapshot does not decode", "tenant", tenant, "err", err)
		return nil, false
	}
	s.log.Info("hub: loaded the shared snapshot", "tenant", tenant, "seq", st.Seq(), "bytes", len(data))
	return st, true
}

// save stores data, tenant's snapshot at seq, unless the bucket already
// holds one at seq or later (another node's). Two nodes racing may both
// write; either result is a valid snapshot.
func (s *sharedSnapshots) save(tenant string, seq uint64, data []byte) {
	// A short look first: a bucket that does not answer (NATS gone, a
	// region cut off) must not hold a shutdown for the upload's timeout.
	ictx, icancel := context.WithTimeout(context.Background(), sharedInfoTimeout)
	info, err := gated(s.api, func() (*jetstream.ObjectInfo, error) { return s.store.GetInfo(ictx, tenant) })
	icancel()
	switch {
	case err != nil && !errors.Is(err, jetstream.ErrObjectNotFound):
		s.log.Warn("hub: shared snapshot not stored", "tenant", tenant, "seq", seq, "err", err)
		return
	case err == nil && info.Metadata["seq"] != "":
		if shared, perr := strconv.ParseUint(info.Metadata["seq"], 10, 64); perr == nil && shared >= seq {
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	meta := jetstream.ObjectMeta{Name: tenant, Metadata: map[string]string{"seq": strconv.FormatUint(seq, 10)}}
	if _, err := gated(s.api, func() (*jetstream.ObjectInfo, error) { return s.store.Put(ctx, meta, bytes.NewReader(data)) }); err != nil {
		s.log.Warn("hub: shared snapshot not stored", "tenant", tenant, "seq", seq, "err", err)
		return
	}
	s.log.Debug("hub: shared snapshot stored", "tenant", tenant, "seq", seq, "bytes", len(data))
}
