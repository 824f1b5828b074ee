// Package snapbucket keeps each tenant's newest snapshot in the cluster's
// JetStream object store, so that a node that starts with an empty (or
// older) data directory loads the newest there and replays only its
// stream's tail. Snapshots are deterministic, so the one of any node at a
// sequence is the one of every node there: two nodes racing to store one
// both store a valid snapshot.
//
// What may enter the bucket, and what may leave it, is checked, because a
// node whose copy of a tenant went wrong while every checksum passed would
// otherwise hand its error to every node that starts from it: a clustered
// node shares only snapshots whose checkpoint a majority of the cluster
// agreed with (Agreement, agree.go), every object names its checkpoint,
// which Load verifies against the state it decodes (check.go), and a
// clustered node opens a tenant only from a state such a checkpoint vouches
// for, its own snapshot file included (Vouched, vouch.go).
//
// A bucket that is slow or missing costs a node a longer replay, never a
// failed start: every call is bounded, and Load and Save log a failure and
// go on as if there were no snapshot. It may import internal/ledger (to decode a
// snapshot), internal/shred (to wipe one), internal/fingerprint (to check
// one) and the nats-io modules (plus the standard library).
//
// Its log lines start "hub:", as they did when this was part of package
// hub, so that the searches docs/OPERATIONS.md and docs/CLUSTERING.md give
// operators still find them.
package snapbucket

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/ledger"
)

// Name is the JetStream object store bucket in which every node keeps each
// tenant's newest snapshot, one object per tenant named after it, with the
// stream sequence it was taken at in the object's metadata ("seq").
const Name = "rankwire_snapshots"

// Timeout bounds one object store call.
const Timeout = 30 * time.Second

// putTimeout bounds the upload of n bytes: a second plus n at 8 MB/s, at
// most Timeout. A cluster stopping whole loses its quorum while its last
// nodes upload their final snapshots: each waits this long, not Timeout,
// before it gives up (the snapshot is on its disk already), so that a
// stop stays within a few seconds.
func putTimeout(n int) time.Duration {
	return min(Timeout, time.Second+time.Duration(n)*time.Second/(8<<20))
}

// infoTimeout bounds the look at the bucket before an upload.
const infoTimeout = 2 * time.Second

// Bucket is the object store of the tenants' snapshots. Safe for
// concurrent use.
type Bucket struct {
	store  jetstream.ObjectStore
	js     jetstream.JetStream              // Save publishes and wipes through it (wipe.go)
	stream jetstream.Stream                 // the bucket's stream
	gate   func(request func() error) error // every request to the bucket passes it
	log    *slog.Logger
}

// Open creates or opens the bucket with replicas copies. Each request to
// it runs through gate (the hub's API gate; nil: as is).
func Open(ctx context.Context, js jetstream.JetStream, gate func(func() error) error, replicas int, log *slog.Logger) (*Bucket, error) {
	if gate == nil {
		gate = func(request func() error) error { return request() }
	}
	b := &Bucket{js: js, gate: gate, log: log}
	store, err := gated(b, func() (jetstream.ObjectStore, error) {
		return js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      Name,
			Description: "rankwire: each tenant's newest snapshot, for nodes that start without one",
			Storage:     jetstream.FileStorage,
			Replicas:    max(replicas, 1),
		})
	})
	if err != nil {
		return nil, fmt.Errorf("hub: snapshot bucket %s: %w", Name, err)
	}
	b.store = store
	if b.stream, err = gated(b, func() (jetstream.Stream, error) { return js.Stream(ctx, stream) }); err != nil {
		return nil, fmt.Errorf("hub: snapshot bucket %s: %w", Name, err)
	}
	return b, nil
}

// Existing returns the bucket where it exists, for a read that must not
// create it (the audit).
func Existing(ctx context.Context, js jetstream.JetStream, log *slog.Logger) (*Bucket, error) {
	store, err := js.ObjectStore(ctx, Name)
	if err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	return &Bucket{store: store, js: js, stream: st, gate: func(request func() error) error { return request() }, log: log}, nil
}

// gated runs f, one request to b's bucket returning a value, through b's gate.
func gated[T any](b *Bucket, f func() (T, error)) (T, error) {
	var v T
	err := b.gate(func() error {
		var err error
		v, err = f()
		return err
	})
	return v, err
}

// Get returns tenant's snapshot as stored, or false where there is none.
// Bounded by Timeout.
func (b *Bucket) Get(ctx context.Context, tenant string) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	data, err := gated(b, func() ([]byte, error) { return b.store.GetBytes(ctx, tenant) })
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, false, nil
	}
	return data, err == nil, err
}

// Load returns tenant's snapshot where it is newer than seq and passes
// its check, or false, its members' personal data opened with kr
// (ledger.Decode). The check (check.go): the decoded state's checkpoint
// must be the one the object names, and where agreed is set, a majority
// of the cluster must have published it. A snapshot that fails costs the
// caller a longer replay, never a wrong state. Bounded by Timeout.
func (s *Bucket) Load(ctx context.Context, tenant string, seq uint64, kr ledger.Keyring, agreed bool) (*ledger.State, bool) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	info, err := s.info(ctx, tenant)
	return s.loadAfter(ctx, tenant, look{info, err}, seq, kr, agreed)
}

// look is what the bucket answered when asked for an object's info.
type look struct {
	info *jetstream.ObjectInfo
	err  error // jetstream.ErrObjectNotFound: the bucket holds none
}

// info asks the bucket for tenant's object's info: one request, bounded
// by ctx.
func (s *Bucket) info(ctx context.Context, tenant string) (*jetstream.ObjectInfo, error) {
	return gated(s, func() (*jetstream.ObjectInfo, error) { return s.store.GetInfo(ctx, tenant) })
}

// loadAfter is Load after its look at the object's info: the download,
// where the object is newer than seq, and the check.
func (s *Bucket) loadAfter(ctx context.Context, tenant string, l look, seq uint64, kr ledger.Keyring, agreed bool) (*ledger.State, bool) {
	obj, err := object{}, l.err
	if err == nil {
		obj, err = gated(s, func() (object, error) { return s.read(ctx, tenant, l.info, seq) })
	}
	if err != nil || obj.data == nil {
		if err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			s.log.Warn("hub: shared snapshot not loaded", "tenant", tenant, "err", err)
		}
		return nil, false
	}
	st, err := ledger.Decode(obj.data, kr)
	if err == nil {
		err = obj.check(st, agreed)
	}
	if err != nil {
		s.log.Warn("hub: shared snapshot refused: the node starts from its own snapshot or replays its log instead", "tenant", tenant, "seq", obj.seq, "err", err)
		return nil, false
	}
	s.log.Info("hub: loaded the shared snapshot", "tenant", tenant, "seq", st.Seq(), "bytes", len(obj.data))
	return st, true
}

// Newer returns the state a node opens tenant from: local, the state in
// this node's own snapshot file (or localErr where none could be read),
// unless s holds a newer snapshot that passes Load's check: that one then.
// A nil s returns local as is.
//
// Where agreed is set (a clustered node) it returns no state that a
// checkpoint the majority of the cluster agreed with does not vouch for
// (Vouched, vouch.go): local only where it is that checkpoint's state, else
// the agreed shared snapshot, else an empty state (the stream is replayed
// from its first event), even where local is newer. Nothing vouches for
// the node's own file otherwise: it may have gone wrong on disk, or before
// it was written, while every checksum passed, and the node would serve
// it until the cluster's next checkpoint.
func (s *Bucket) Newer(ctx context.Context, tenant string, local *ledger.State, localErr error, kr ledger.Keyring, agreed bool) (*ledger.State, error) {
	if agreed {
		return s.Vouched(ctx, tenant, local, localErr, kr)
	}
	if s == nil {
		return local, localErr
	}
	var seq uint64
	if localErr == nil {
		seq = local.Seq()
	}
	if st, ok := s.Load(ctx, tenant, seq, kr, false); ok {
		return st, nil
	}
	return local, localErr
}

// Save stores snap, tenant's snapshot, unless the bucket already holds
// one at snap.Seq or later (another node's), then overwrites the chunks
// of the object it replaced (secure delete, wipe.go: never a mere purge,
// so that no replaced snapshot's profiles stay on disk). Two nodes racing
// may both write chunks; only the one whose info follows the object it
// read stores its snapshot, the other wipes its chunks: either result is
// a valid snapshot, and no node wipes an object it did not replace. A
// clustered node calls it through an Agreement (agree.go), which decides
// whether the snapshot may be shared at all.
func (s *Bucket) Save(tenant string, snap Snapshot) {
	seq := snap.Seq
	// A short look first: a bucket that does not answer (NATS gone, a
	// region cut off) must not hold a shutdown for the upload's timeout.
	ictx, icancel := context.WithTimeout(context.Background(), infoTimeout)
	cur, err := s.current(ictx, tenant)
	icancel()
	switch {
	case err != nil:
		s.log.Warn("hub: shared snapshot not stored", "tenant", tenant, "seq", seq, "err", err)
		return
	case cur.holdsFrom(seq):
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), putTimeout(len(snap.Data)))
	defer cancel()
	if err := s.put(ctx, tenant, snap, cur); err != nil {
		if lostRace(err) { // another node stored one first: it stands
			s.log.Debug("hub: shared snapshot not stored: another node's came first", "tenant", tenant, "seq", seq)
			return
		}
		s.log.Warn("hub: shared snapshot not stored", "tenant", tenant, "seq", seq, "err", err)
		return
	}
	s.log.Debug("hub: shared snapshot stored", "tenant", tenant, "seq", seq, "bytes", len(snap.Data), "agreed", snap.Agreed)
	if cur.info != nil {
		s.wipe(tenant, cur.info.NUID, cur.info.Chunks)
	}
}

// Share opens the bucket for a node whose NATS other nodes share, in the
// background where it must wait: a cluster still forming its quorum may
// not answer for a while, and meanwhile the node's snapshots stay local.
type Share struct {
	JS       jetstream.JetStream
	Gate     func(request func() error) error // as Open's
	Replicas int
	Log      *slog.Logger
	// Attempt bounds one attempt to open the bucket, so that a bucket
	// that does not answer does not use up the node's start.
	Attempt time.Duration
	// Opened is called once, with the bucket, when it opens.
	Opened func(*Bucket)
}

// Start makes one attempt now, bounded by ctx and Attempt. Where it fails,
// it logs and retries on a goroutine every 1 to 5 s until the bucket opens
// or bg ends; wg waits for that goroutine.
func (s Share) Start(ctx, bg context.Context, wg *sync.WaitGroup) {
	if s.try(ctx, bg) {
		return
	}
	wg.Go(func() {
		wait := time.Second
		for {
			select {
			case <-bg.Done():
				return
			case <-time.After(wait):
			}
			if s.try(bg, bg) {
				return
			}
			wait = min(2*wait, 5*time.Second)
		}
	})
}

// try makes one attempt, logging a failure unless bg ended; it reports
// whether the bucket is open.
func (s Share) try(ctx, bg context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, s.Attempt)
	defer cancel()
	b, err := Open(ctx, s.JS, s.Gate, s.Replicas, s.Log)
	if err != nil {
		if bg.Err() == nil {
			s.Log.Warn("hub: snapshots stay local for now; retrying", "err", err)
		}
		return false
	}
	s.Opened(b)
	s.Log.Info("hub: snapshots shared through the bucket", "bucket", Name)
	return true
}
