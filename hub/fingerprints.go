package hub

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rankwire/rankwire/internal/failpoint"
	fprint "github.com/rankwire/rankwire/internal/fingerprint"
	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/snapbucket"
)

// Divergence (docs/CLUSTERING.md). Each replica publishes its checkpoints
// (internal/fingerprint) through Config.Fingerprints; the cluster's
// comparison (cmd/gateway) calls Agreed (the snapshot there may be shared:
// snapbucket.Agreement) or Diverged: the tenant answers ErrUnavailable, its
// snapshot file is distrusted (snapfile.Distrust), and a rebuilder replays the stream
// into the agreed shared snapshot (or an empty state) until the replica
// goroutine adopts it at its own sequence.

// Fingerprints links the replicas' checkpoints to the cluster's comparison.
// Set Every and Publish before Start; Start links it to the Hub. Its
// methods are safe for concurrent use.
type Fingerprints struct {
	// Every is the checkpoint spacing in stream sequences. Zero means
	// internal/fingerprint's DefaultEvery.
	Every uint64
	// Publish receives each checkpoint of a tenant, on that tenant's
	// replica goroutine, in sequence order: it must not block.
	Publish func(tenant string, c fprint.Checkpoint)

	hub        atomic.Pointer[Hub] // set by Start
	rebuilding atomic.Int64
}

// Diverged takes tenant out of service on this node (its requests answer
// 503 naming seq) and starts rebuilding it from the stream. It returns
// false only where the tenant is not open here (yet: a replica publishes
// checkpoints while it catches up at its opening, before the registry
// holds it) or the Hub is not started: the caller hands it over again. A
// tenant already rebuilding, or a Hub closed, needs nothing more: true.
func (f *Fingerprints) Diverged(tenant string, seq uint64) bool {
	h := f.hub.Load()
	if h == nil || h.streams == nil {
		return false
	}
	if h.ctx.Err() != nil {
		return true
	}
	r := h.reg.lookup(tenant)
	if r == nil {
		return false
	}
	if !r.fp.diverged.CompareAndSwap(0, seq) {
		return true
	}
	f.rebuilding.Add(1)
	r.fp.shares.Diverge(seq)                  // it shares nothing up to seq,
	_ = h.snaps.files.Distrust(tenant, h.log) // and a restart before the rebuild does not load its file (logged)
	r.log.Error("hub: this node's copy of the tenant diverged from the cluster's: serving none of it until rebuilt from the stream", "seq", seq)
	h.wg.Go(func() {
		defer f.rebuilding.Add(-1)
		h.streams.rebuild(h.ctx, r)
	})
	return true
}

// Agreed: a majority published c, equal to this node's checkpoint (snapbucket.Agreement).
func (f *Fingerprints) Agreed(tenant string, c fprint.Checkpoint) {
	if h := f.hub.Load(); h != nil && h.reg != nil {
		if r := h.reg.lookup(tenant); r != nil {
			r.fp.shares.Agree(c)
		}
	}
}

// Rebuilding returns how many tenants this node serves none of because
// they diverged and are being rebuilt: a readiness reason and a metric.
func (f *Fingerprints) Rebuilding() int { return int(f.rebuilding.Load()) }

// fpState is a replica's part in fingerprinting.
type fpState struct {
	link     *Fingerprints         // nil: fingerprinting is off
	from     uint64                // the stream's end when the tenant opened: no checkpoint up to it, no request served before it; set before the replica runs
	diverged atomic.Uint64         // the checkpoint this copy diverged at; 0: none
	shares   *snapbucket.Agreement // which snapshots the cluster agreed with, hence may be shared; nil when off
	adopt    chan adoption         // a rebuilt state for the replica goroutine; nil when off
}

// adoption is a rebuilt state offered to the replica goroutine; ok says
// whether it took it (it had applied exactly st's sequence).
type adoption struct {
	st *ledger.State
	ok chan bool
}

// init turns fingerprinting on from the event after from: the opening's catch-up takes no
// checkpoint (the others published those long ago; encoding each would slow every start).
func (p *fpState) init(link *Fingerprints, from uint64, done <-chan struct{}) {
	if p.from = from; link != nil {
		p.link, p.adopt, p.shares = link, make(chan adoption), snapbucket.NewAgreement(link.Every, done)
	}
}

// checkpoint publishes the state's checkpoint where seq is one: the hash of its encoding in clear
// (Prepared.Clear: no seal on the apply path; equal states, equal hashes, whatever the keys), and
// returns it prepared with that hash (nil: none taken) for maybeSnapshot, whose saver shares it without
// hashing it again. Like it, no lock. Replica goroutine only.
func (r *replica) checkpoint(seq uint64) *taken {
	p := r.fp.link
	if p == nil || p.Publish == nil || seq <= r.fp.from || !fprint.Due(seq, p.Every) {
		return nil
	}
	data, err := r.st.Prepare()
	if err != nil {
		r.log.Error("hub: checkpoint not taken: the state does not encode", "seq", seq, "err", err)
		return nil
	}
	c := fprint.Of(seq, data.Clear())
	p.Publish(r.tenant, c)
	return &taken{data, &c.Sum}
}

// taken is a checkpoint's state, prepared, with its hash.
type taken struct {
	prep *ledger.Prepared
	sum  *fprint.Sum
}

// err is what the tenant's requests answer while its copy diverged, or lags the stream's end at its opening.
func (p *fpState) err(applied uint64) error {
	if seq := p.diverged.Load(); seq != 0 {
		return unavailable(fmt.Sprintf("this node's copy of the tenant diverged from the cluster's at seq %d and is being rebuilt; ask another node", seq), nil)
	}
	if applied < p.from {
		return unavailable(fmt.Sprintf("this node is catching up with the tenant's log (at seq %d of %d); ask another node", applied, p.from), nil)
	}
	return nil
}

// errBehind: the replica moved on while the rebuilt state caught up.
var errBehind = errors.New("hub: the replica moved on during the rebuild")

// rebuild replays r's stream into a new state until the replica goroutine
// adopts it, retrying failures with backoff until ctx ends.
func (sl *streamLog) rebuild(ctx context.Context, r *replica) {
	// A test build's hold (internal/failpoint); nothing otherwise.
	failpoint.BeforeRebuild(ctx, r.log, r.tenant)
	st, _ := sl.snaps.shared.Load().Newer(ctx, r.tenant, ledger.New(), nil, sl.keys.Ring(r.tenant), true) // never the local file
	if st.Seq() > r.applied.Load() {
		st = ledger.New() // the bucket's is ahead of this replica
	}
	st.SetLanes(runLanes)
	start := time.Now()
	for wait := reopenFirst; ctx.Err() == nil; {
		err := sl.catchUp(ctx, r, st)
		if err == nil {
			r.log.Info("hub: tenant rebuilt from the stream: serving it again", "seq", st.Seq(), "took", time.Since(start).Round(time.Millisecond))
			return
		}
		if errors.Is(err, errBehind) {
			continue
		}
		r.log.Warn("hub: rebuilding a diverged tenant failed, retrying", "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, reopenMax)
	}
}

// catchUp replays r's stream from after st's sequence to what r has
// applied, then offers st to r's goroutine.
func (sl *streamLog) catchUp(ctx context.Context, r *replica, st *ledger.State) error {
	if last := r.applied.Load(); last > st.Seq() {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		stream, err := sl.stream(cctx, r.tenant, false)
		cancel()
		if err != nil {
			return err
		}
		if err := sl.replayRange(ctx, stream, st.Seq(), last, func(seq uint64, ev *ledger.Event) { st.Apply(seq, ev) }); err != nil {
			return err
		}
		st.Skip(last) // where the last events did not decode: every replica skips them
	}
	a := adoption{st: st, ok: make(chan bool, 1)}
	select {
	case r.fp.adopt <- a:
	case <-ctx.Done():
		return ctx.Err()
	}
	if !<-a.ok {
		return errBehind
	}
	return nil
}

// adoptRebuilt makes a rebuilt state r's own if it is at r's sequence.
// Replica goroutine only.
func (r *replica) adoptRebuilt(a adoption) {
	if a.st.Seq() != r.applied.Load() {
		a.ok <- false
		return
	}
	r.prepareState(a.st)
	r.mu.Lock()
	r.st = a.st
	r.mu.Unlock()
	r.fp.diverged.Store(0)
	r.rebuilt = true // its snapshot now, after any in flight: the file is distrusted until then
	r.maybeSnapshot(nil)
	a.ok <- true
}
