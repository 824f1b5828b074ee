package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// SnapshotAudit is one snapshot compared with the replay at its sequence.
type SnapshotAudit struct {
	Source string // "file <path>" or "shared bucket"
	Seq    uint64
	Equal  bool
	Diffs  []string // what differs, where not Equal (at most 20 lines)
}

// Audit is the pure half of the audit replay (the hub's Verify): it
// rebuilds a tenant's state from its events alone, from the first, with
// Apply, and compares it with snapshots at their sequence: equal bytes
// prove that those standings follow from the submissions. Not safe for
// concurrent use.
type Audit struct {
	st     *State
	kr     Keyring // opens the snapshots' personal data
	snaps  []*auditSnapshot
	events uint64
}

// auditSnapshot is a snapshot to compare, decoded (nil once compared).
type auditSnapshot struct {
	audit SnapshotAudit
	st    *State
}

// NewAudit returns an audit of a tenant with no events applied yet,
// whose snapshots' personal data kr opens.
func NewAudit(kr Keyring) *Audit { return &Audit{st: New(), kr: kr} }

// AddSnapshot adds a snapshot to compare, named by source; one that does
// not decode is reported as a difference. Add every snapshot before the
// first Apply: one at seq 0 is compared at once.
func (a *Audit) AddSnapshot(source string, data []byte) {
	s := &auditSnapshot{audit: SnapshotAudit{Source: source}}
	st, err := Decode(data, a.kr)
	if err != nil {
		s.audit.Diffs = []string{"does not decode: " + err.Error()}
	} else {
		s.st, s.audit.Seq = st, st.Seq()
	}
	a.snaps = append(a.snaps, s)
	a.compare()
}

// Apply applies the event at seq and compares the snapshots taken at seq.
func (a *Audit) Apply(seq uint64, ev *Event) {
	a.st.Apply(seq, ev)
	a.events++
	a.compare()
}

func (a *Audit) compare() {
	for _, s := range a.snaps {
		if s.st != nil && s.audit.Seq == a.st.Seq() {
			s.audit.Diffs = Diff(a.st, s.st)
			s.audit.Equal = len(s.audit.Diffs) == 0
			s.st = nil // compared
		}
	}
}

// TenantAudit is one tenant's replay.
type TenantAudit struct {
	Tenant    string
	Events    uint64 // events replayed
	LastSeq   uint64 // the stream's last sequence when the replay started
	Boards    int
	Members   int    // member ids of the tenant
	Digest    string // "sha256:" hex of the rebuilt state's snapshot encoding at LastSeq, in clear (Encode(nil))
	Snapshots []SnapshotAudit
	Err       error // the replay could not finish
}

// OK reports whether the replay finished and every snapshot matched.
func (a TenantAudit) OK() bool {
	if a.Err != nil {
		return false
	}
	for _, s := range a.Snapshots {
		if !s.Equal {
			return false
		}
	}
	return true
}

// Result reports what the audit of tenant found: the snapshots compared
// and, where the replay reached last (the stream's last sequence), the
// digest of the state rebuilt; a snapshot not compared by then is past
// the stream's end, so not from this stream. O(state).
func (a *Audit) Result(tenant string, last uint64) TenantAudit {
	r := TenantAudit{Tenant: tenant, Events: a.events, LastSeq: last}
	complete := a.st.Seq() >= last
	for _, s := range a.snaps {
		if s.st != nil && complete {
			s.audit.Diffs = []string{fmt.Sprintf("the snapshot is at seq %d, past the stream's end (%d): not from this stream", s.audit.Seq, last)}
		}
		r.Snapshots = append(r.Snapshots, s.audit)
	}
	if !complete {
		r.Err = fmt.Errorf("the replay stopped at seq %d of %d", a.st.Seq(), last)
		return r
	}
	data, err := a.st.Encode(nil) // in clear: the digest does not depend on the keys
	if err != nil {
		r.Err = fmt.Errorf("encode: %w", err)
		return r
	}
	sum := sha256.Sum256(data)
	r.Digest = "sha256:" + hex.EncodeToString(sum[:])
	r.Boards, r.Members = a.st.NumBoards(), a.st.Members()
	return r
}
