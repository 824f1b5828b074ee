package hub

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	fprint "github.com/rankwire/rankwire/internal/fingerprint"
	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/notify"
	"github.com/rankwire/rankwire/internal/raftcompact"
	"github.com/rankwire/rankwire/internal/shred"
	"github.com/rankwire/rankwire/internal/snapbucket"
	"github.com/rankwire/rankwire/internal/snapfile"
)

// snapshotter writes and loads tenant snapshots: the local files
// (internal/snapfile) and the cluster's shared copy. Safe for concurrent
// use by different tenants' replicas: each writes its own file.
type snapshotter struct {
	files    snapfile.Files
	every    int           // events between snapshots; < 0: only at Close
	interval time.Duration // longest time between snapshots of a changing state; <= 0: no limit
	log      *slog.Logger
	shared   atomic.Pointer[snapbucket.Bucket] // the cluster's bucket of snapshots; nil: local files only (set once, maybe late: hub.shareSnapshots)
	compact  *raftcompact.Compactor            // compacts the Raft logs that held erased data; nil without an embedded server
	keys     *shred.Keys                       // the members' keys: the log's (members.go) and the snapshots' (Ring); nil: in clear
	agreed   bool                              // load only shared snapshots a majority agreed with (fingerprinting on: internal/snapbucket's check.go)
	// opened is closed once the bucket opens; nil where none is shared.
	// Set before any tenant opens (hub.shareSnapshots), read-only after.
	opened   chan struct{}
	openedBy time.Time // how long a tenant's load waits for the bucket to open
}

// bucketWait bounds how long after the first attempt at the bucket a
// tenant's load waits for it: a node's tenants open at its start, often
// while a loaded cluster's first answer is late, and a stream replayed
// from its first event costs more than a second's wait for the snapshot
// that spares it.
const bucketWait = 5 * time.Second

// expectBucket says a bucket is being opened: tenants' loads wait for it
// up to within from now. Called before any tenant opens.
func (s *snapshotter) expectBucket(within time.Duration) {
	s.opened, s.openedBy = make(chan struct{}), time.Now().Add(within)
}

// openedBucket stores the bucket once it opens and wakes the loads
// waiting for it (snapbucket.Share's Opened).
func (s *snapshotter) openedBucket(b *snapbucket.Bucket) {
	s.shared.Store(b)
	close(s.opened)
}

// awaitBucket waits, within openedBy and ctx, for a bucket still opening.
func (s *snapshotter) awaitBucket(ctx context.Context) {
	wait := time.Until(s.openedBy)
	if s.opened == nil || wait <= 0 || s.shared.Load() != nil {
		return // past the start's window: a later open never waits
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-s.opened:
	case <-t.C:
	case <-ctx.Done():
	}
}

// load returns the tenant's newest snapshotted state (the encoding:
// internal/ledger/snapshot.go; the file: internal/snapfile): the local
// file's, or the shared one where that is newer (a node that starts with an
// empty or old --data) and passes its check (internal/snapbucket), or an
// empty state where there is neither. One that does not decode (damaged, or
// its keys not readable now) is ignored: the node replays the stream
// instead. A shared one refused costs a longer replay. O(snapshot size).
func (s *snapshotter) load(ctx context.Context, tenant string) (*ledger.State, error) {
	st, err := s.loadLocal(tenant)
	s.awaitBucket(ctx)
	return s.shared.Load().Newer(ctx, tenant, st, err, s.keys.Ring(tenant), s.agreed)
}

// loadLocal returns the state in tenant's snapshot file, or an empty state
// where there is none.
func (s *snapshotter) loadLocal(tenant string) (*ledger.State, error) {
	data, err := s.files.Read(tenant)
	switch {
	case err != nil:
		return nil, err
	case data == nil:
		return ledger.New(), nil
	}
	return ledger.Decode(data, s.keys.Ring(tenant))
}

// snapJob is a snapshot on its way to the file, sealed by the saver.
type snapJob struct {
	seq   uint64
	snap  *ledger.Prepared
	sum   *fprint.Sum // the checkpoint's hash where snap is one (fingerprints.go), else nil
	erase bool        // follows an erasure: the Raft logs are compacted after the save
	fixed bool        // the rebuilt state of a diverged copy: its file is trusted again once written (fingerprints.go)
}

// maybeSnapshot snapshots at multiples of s.every (checkpoints fall there
// too) or after s.interval. Called by the replica goroutine, st's only
// writer, after an apply: it prepares st without a lock; apply waits for that (0.18 s at
// 1 M members), not for the saver's seals of personal data, write and fsync. While the saver is
// busy none starts: the next event's does. cp, where not nil, is st's checkpoint at this event.
func (r *replica) maybeSnapshot(cp *taken) {
	r.sinceSnap++
	erased := r.erased || r.resnap.Swap(false)                           // personal data erased: no snapshot may keep it (members.go), so one now
	if (r.snaps.every < 0 || r.saving.Load()) && !erased && !r.rebuilt { // those two queue after the save in flight
		return
	}
	byCount := cp != nil || r.snaps.every > 0 && r.sinceSnap >= r.snaps.every // a checkpoint (enc) is one too: only those are shared
	byTime := r.snaps.interval > 0 && time.Since(r.snapAt) >= r.snaps.interval
	if !byCount && !byTime && !erased && !r.rebuilt {
		return
	}
	var data *ledger.Prepared
	var sum *fprint.Sum
	var err error
	if cp != nil {
		data, sum = cp.prep, cp.sum
	} else {
		data, err = r.st.Prepare()
	}
	if err != nil {
		r.log.Error("hub: snapshot", "err", err)
		return
	}
	r.sinceSnap, r.snapAt, r.erased = int(r.st.Seq()%uint64(max(r.snaps.every, 1))), time.Now(), false
	r.saving.Store(true)
	r.saves <- snapJob{r.st.Seq(), data, sum, erased, r.rebuilt} // never blocks where the saver is idle; after an erasure or a rebuild, waits for it
	r.rebuilt = false
}

// saveLoop writes the snapshots maybeSnapshot hands over until saves is
// closed. Run by the replica's saver goroutine, which run owns.
func (r *replica) saveLoop(saves <-chan snapJob) {
	for j := range saves {
		r.save(j)
		r.saving.Store(false)
	}
}

func (r *replica) save(j snapJob) {
	data, err := j.snap.Seal(r.snaps.keys.Ring(r.tenant)) // a key destroyed since (an erasure not yet snapshotted): not written
	if err == nil {
		err = r.snaps.files.Save(r.tenant, data)
	}
	if err != nil {
		r.log.Error("hub: snapshot", "err", err)
		r.resnap.CompareAndSwap(false, j.erase)
		return
	}
	r.savedSeq.Store(j.seq)
	r.savedAt.Store(time.Now().UnixNano())
	r.log.Debug("hub: snapshot written", "seq", j.seq, "bytes", len(data))
	if j.fixed && r.fp.diverged.Load() == 0 { // the rebuilt state is on disk (a failure is logged)
		_ = r.snaps.files.Trust(r.tenant, r.log)
	}
	r.fp.shares.Offer(r.snaps.shared.Load(), r.tenant, j.seq, j.sum, j.snap.Clear(), data, j.erase)
	if j.erase { // the Raft logs of the streams that held the erased data keep their proposals until compacted
		r.snaps.compact.Streams(shred.Stream, snapbucket.Stream, notify.Stream, streamName(r.tenant))
	}
}

// finalSnapshot writes the state, if it changed since the last snapshot
// written, on the replica goroutine after the saver has stopped.
func (r *replica) finalSnapshot() {
	if r.st.Seq() == r.savedSeq.Load() {
		return
	}
	if p, err := r.st.Prepare(); err != nil {
		r.log.Error("hub: snapshot", "err", err)
	} else {
		r.save(snapJob{r.st.Seq(), p, nil, r.erased, r.rebuilt})
	}
}
