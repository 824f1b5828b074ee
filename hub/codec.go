package hub

import (
	"encoding/json"
	"fmt"
)

// This file is the event encoding, kept in one place so that it can be
// swapped for a binary one: JSON with one-letter keys. A 1,000-item batch of
// 16-byte ids encodes to about 60 KB, well under NATS's 1 MB payload limit
// even with 128-byte ids and idempotency ids (about 300 KB).

// eventKind says what an event does.
type eventKind string

const (
	evSettings eventKind = "settings" // create or update a board
	evSubmit   eventKind = "submit"   // a batch of submissions (one call; streams written before group commit)
	evGroup    eventKind = "submits"  // several calls' batches, group-committed (committer.go)
	evLink     eventKind = "link"     // identity link (may merge)
	evRemove   eventKind = "remove"   // remove a member from a board
	evReset    eventKind = "reset"    // empty a board's all window
	evDelete   eventKind = "delete"   // delete a board
	evApprove  eventKind = "approve"  // rank a quarantined submission (rules.go)
	evReject   eventKind = "reject"   // drop a quarantined submission
	evProfile  eventKind = "profile"  // set a member's profile (profile.go)
)

// event is one entry of a tenant's stream.
type event struct {
	Kind     eventKind `json:"k"`
	At       int64     `json:"t"`           // acceptance time, unix ms UTC, stamped at ingest
	Waiter   string    `json:"w,omitempty"` // the publishing call's key; ignored by apply
	Board    string    `json:"b,omitempty"`
	Settings *Settings `json:"c,omitempty"` // evSettings
	Items    []Item    `json:"i,omitempty"` // evSubmit
	Groups   []group   `json:"g,omitempty"` // evGroup
	Member   string    `json:"m,omitempty"` // evLink, evRemove
	Aliases  []string  `json:"a,omitempty"` // evLink
	QID      uint64    `json:"q,omitempty"` // evApprove, evReject
	Profile  *Profile  `json:"p,omitempty"` // evProfile

	// NoMerge, on evLink, forbids merging members: an alias that resolves
	// to another member fails the event with ErrForbidden. Absent (old
	// events, Link) means merges are allowed, as before.
	NoMerge bool `json:"nm,omitempty"`
	// MaxBoards, on evSettings, is the tenant's board limit when the event
	// was accepted: creating a board past it fails with ErrLimit. Absent
	// (old events, PutBoard) means no limit.
	MaxBoards int `json:"mb,omitempty"`
	// KeepIDs, on evSubmit and evGroup, is how long (ms) the boards it
	// writes keep idempotency ids: applying it first forgets older ones
	// (seen.go). Absent (old events, no retention) means for ever.
	KeepIDs int64 `json:"ki,omitempty"`

	// digests[g][i] stands for the idempotency id of item i of group g
	// (evSubmit: group 0 is Items), zero where it has none: computed by
	// prepare on the fetcher goroutine, ahead of apply. Never encoded.
	digests [][]idDigest
}

// prepare computes ev's id digests (see event.digests). Cost: one SHA-256
// per item with an id.
func (ev *event) prepare() {
	switch ev.Kind {
	case evSubmit:
		ev.digests = [][]idDigest{digestItems(ev.Items)}
	case evGroup:
		ev.digests = make([][]idDigest, len(ev.Groups))
		for i, g := range ev.Groups {
			ev.digests[i] = digestItems(g.Items)
		}
	}
}

// digestsOf returns the digests of group g of ev, nil where prepare did not
// run (apply then computes them itself).
func (ev *event) digestsOf(g int) []idDigest {
	if g < len(ev.digests) {
		return ev.digests[g]
	}
	return nil
}

func digestItems(items []Item) []idDigest {
	var out []idDigest
	for i, it := range items {
		if it.ID == "" {
			continue
		}
		if out == nil {
			out = make([]idDigest, len(items))
		}
		out[i] = digestID(it.ID)
	}
	return out
}

// group is one Submit call's batch inside an evGroup event: applied in
// order, each with its own board, results and error.
type group struct {
	Board string `json:"b"`
	Items []Item `json:"i"`
}

func encodeEvent(ev *event) ([]byte, error) {
	return json.Marshal(ev)
}

func decodeEvent(data []byte) (*event, error) {
	ev := new(event)
	if err := json.Unmarshal(data, ev); err != nil {
		return nil, fmt.Errorf("hub: decode event: %w", err)
	}
	return ev, nil
}
