package snapbucket

import (
	"sync"
	"time"

	"github.com/rankwire/rankwire/internal/fingerprint"
)

// Agreement decides which of one node's snapshots of one tenant it may
// share. The rule: a clustered node shares a snapshot only where its
// sequence is a checkpoint and a majority of the cluster published, at
// that sequence, the very hash this snapshot's state has (the cluster's
// comparison says so: Agree). A node whose copy diverged there (Diverge),
// or that does not hear the cluster agree within AgreeWait, shares
// nothing: its snapshot stays on its own disk, and nothing it got wrong
// reaches the nodes that start or rebuild from the bucket. Snapshots at
// other sequences (by time, at a stop, at an erasure) are never shared by
// a clustered node.
//
// A nil *Agreement is a node without the cluster's comparison (a hub
// without Fingerprints: a single node, or gateways on an external NATS):
// it shares every snapshot at once, marked not agreed, which clustered
// nodes refuse at Load.
//
// Safe for concurrent use: Agree and Diverge come from the comparison's
// goroutine, Offer from the tenant's snapshot saver.
type Agreement struct {
	every uint64          // checkpoint spacing (fingerprint.Due)
	done  <-chan struct{} // closed when the node stops: Offer waits no more

	mu       sync.Mutex             // guards the fields below
	agreed   fingerprint.Checkpoint // the newest checkpoint a majority published and this node's equals
	diverged uint64                 // the newest checkpoint at which this node's copy differed
	changed  chan struct{}          // closed, and replaced, at every verdict
}

// AgreeWait bounds how long Offer waits for the cluster's verdict on a
// checkpoint. The nodes report a checkpoint within milliseconds to
// seconds of each other; a snapshot whose verdict takes longer (a
// majority down, or far behind) is not shared: the next checkpoint's may be.
const AgreeWait = 5 * time.Second

// NewAgreement returns the Agreement of one tenant on a node whose
// checkpoints fall every every sequences (zero: fingerprint.DefaultEvery).
// Offer stops waiting once done is closed.
func NewAgreement(every uint64, done <-chan struct{}) *Agreement {
	return &Agreement{every: every, done: done, changed: make(chan struct{})}
}

// Offer shares tenant's snapshot at seq, written to this node's disk,
// where the rule allows: sum is its checkpoint's hash where the caller has
// it (the checkpoint it published), else nil and it is hashed from clear,
// its encoding in clear (O(len), and only where it may be shared), data the
// sealed bytes to store in b. On a nil
// Agreement it is stored at once, not agreed. Otherwise it is stored,
// agreed, once the cluster agreed with its checkpoint, waiting for that
// verdict up to AgreeWait; it is not stored where seq is no checkpoint,
// the node diverged at or after seq, or no verdict came, and where it
// follows an erasure (erase) the older shared one is withdrawn instead
// (Bucket.Withdraw). A nil b (no bucket) shares nothing. Blocks the caller
// (the saver) for the wait and the upload.
func (a *Agreement) Offer(b *Bucket, tenant string, seq uint64, sum *fingerprint.Sum, clear, data []byte, erase bool) {
	if b == nil {
		return
	}
	share := a == nil || fingerprint.Due(seq, a.every) // only checkpoints are ever agreed
	snap := Snapshot{Seq: seq, Data: data, Agreed: a != nil}
	if share {
		if sum == nil { // hashed here only where the checkpoint's own hash is not at hand
			s := fingerprint.Of(seq, clear).Sum
			sum = &s
		}
		snap.Sum = *sum
	}
	if !share || a != nil && !a.wait(fingerprint.Checkpoint{Seq: seq, Sum: snap.Sum}) {
		if erase {
			b.Withdraw(tenant, seq)
		}
		return
	}
	b.Save(tenant, snap)
}

// wait reports whether the cluster agrees with c, waiting for its verdict
// up to AgreeWait or until done.
func (a *Agreement) wait(c fingerprint.Checkpoint) bool {
	timer := time.NewTimer(AgreeWait)
	defer timer.Stop()
	for {
		a.mu.Lock()
		agreed, decided, changed := a.verdictLocked(c)
		a.mu.Unlock()
		if decided {
			return agreed
		}
		select {
		case <-changed:
		case <-timer.C:
			return false
		case <-a.done:
			return false
		}
	}
}

// verdictLocked says whether c is agreed, where that is decided: refused
// once the node diverged at or after c.Seq, or the cluster agreed with
// another checkpoint at c.Seq or later.
func (a *Agreement) verdictLocked(c fingerprint.Checkpoint) (agreed, decided bool, changed <-chan struct{}) {
	switch {
	case a.diverged >= c.Seq:
		return false, true, nil
	case a.agreed == c:
		return true, true, nil
	case a.agreed.Seq >= c.Seq:
		return false, true, nil
	}
	return false, false, a.changed
}

// Agree records that a majority of the cluster published c and that this
// node's checkpoint at c.Seq equals it. Never blocks.
func (a *Agreement) Agree(c fingerprint.Checkpoint) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if c.Seq >= a.agreed.Seq && c != a.agreed {
		a.agreed = c
		a.signalLocked()
	}
}

// Diverge records that this node's copy differed from the majority's at
// seq: no snapshot at or before it is shared. Never blocks.
func (a *Agreement) Diverge(seq uint64) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if seq > a.diverged {
		a.diverged = seq
		a.signalLocked()
	}
}

// signalLocked wakes the waiting Offer.
func (a *Agreement) signalLocked() {
	close(a.changed)
	a.changed = make(chan struct{})
}
