package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
)

// This file is the event encoding, kept in one place so that it can be
// swapped for a binary one: JSON with one-letter keys. A 1,000-item batch of
// 16-byte ids encodes to about 60 KB, well under NATS's 1 MB payload limit
// even with 128-byte ids and idempotency ids (about 300 KB).

// EventKind says what an event does.
type EventKind string

// The event kinds. Each string is stored in streams for ever: never rename
// or reuse one.
const (
	EvSettings EventKind = "settings" // create or update a board
	EvSubmit   EventKind = "submit"   // a batch of submissions (one call; streams written before group commit)
	EvGroup    EventKind = "submits"  // several calls' batches, group-committed (the hub's committer.go)
	EvLink     EventKind = "link"     // identity link (may merge)
	EvRemove   EventKind = "remove"   // remove a member from a board
	EvReset    EventKind = "reset"    // empty a board's all window
	EvDelete   EventKind = "delete"   // delete a board
	EvApprove  EventKind = "approve"  // rank a quarantined submission (rules.go)
	EvReject   EventKind = "reject"   // drop a quarantined submission
	EvProfile  EventKind = "profile"  // set a member's profile (profile.go)

	EvDisqualify EventKind = "disqualify" // take a member out of a board's standings (dispute.go)
	EvReinstate  EventKind = "reinstate"  // put a disqualified member back
	EvSettle     EventKind = "settle"     // a board's payout is done: its standings never change again
	EvVoid       EventKind = "void"       // void one submission: assign the member's recomputed entries (dispute_void.go)

	EvErase      EventKind = "erase"      // erase a member's personal data (profile_erase.go)
	EvSchedule   EventKind = "schedule"   // create or replace a schedule (schedule_state.go)
	EvUnschedule EventKind = "unschedule" // delete a schedule; its boards stay
	EvFire       EventKind = "fire"       // create the board of one occurrence of a schedule
)

// EventKinds lists every event kind, for tables that must cover them all
// (the API's table of effects); TestEventKindsListed keeps it complete.
var EventKinds = []EventKind{EvSettings, EvSubmit, EvGroup, EvLink, EvRemove, EvReset, EvDelete,
	EvApprove, EvReject, EvProfile, EvDisqualify, EvReinstate, EvSettle, EvVoid, EvErase, EvSchedule, EvUnschedule, EvFire}

// Event is one entry of a tenant's stream.
type Event struct {
	Kind     EventKind `json:"k"`
	At       int64     `json:"t"`           // acceptance time, unix ms UTC, stamped at ingest
	Waiter   string    `json:"w,omitempty"` // the publishing call's key; ignored by apply
	Board    string    `json:"b,omitempty"`
	Settings *Settings `json:"c,omitempty"`  // EvSettings
	Items    []Item    `json:"i,omitempty"`  // EvSubmit
	Groups   []Group   `json:"g,omitempty"`  // EvGroup
	Member   string    `json:"m,omitempty"`  // EvLink, EvRemove, EvProfile, EvErase (all but EvRemove: the id, never an alias, as the hub logs them)
	Aliases  []string  `json:"a,omitempty"`  // EvLink; EvErase: the former ids of members merged into Member (their keys destroyed too)
	QID      uint64    `json:"q,omitempty"`  // EvApprove, EvReject
	Profile  *Profile  `json:"p,omitempty"`  // EvProfile
	Reason   string    `json:"r,omitempty"`  // EvDisqualify, EvReinstate, EvSettle, EvVoid, EvApprove, EvReject: why (dispute.go)
	Sub      string    `json:"sb,omitempty"` // the same: the acting token's sub claim
	Void     *Void     `json:"vd,omitempty"` // EvVoid: the submission and the member's new entries (dispute_void.go)
	// Sealed, on EvProfile and EvLink, holds the personal fields sealed
	// under the member's key (profile_erase.go); Unseal fills Profile and
	// Aliases from it before apply.
	Sealed *Sealed `json:"sl,omitempty"`

	// Name is the schedule of EvSchedule, EvUnschedule and EvFire;
	// Schedule its new value (EvSchedule), Occ the start of the occurrence
	// fired (EvFire, unix ms; Board is its board's name).
	Name     string    `json:"n,omitempty"`
	Schedule *Schedule `json:"sd,omitempty"`
	Occ      int64     `json:"oc,omitempty"`
	// MaxSchedules, on EvSchedule, is the tenant's schedule limit when the
	// event was accepted (zero: none), as MaxBoards is on EvSettings and
	// EvFire.
	MaxSchedules int `json:"ms,omitempty"`

	// NoMerge, on EvLink, forbids merging members: an alias that resolves
	// to another member fails the event with ErrForbidden. Absent (old
	// events, Link) means merges are allowed, as before.
	NoMerge bool `json:"nm,omitempty"`
	// Logged, on EvApprove and EvReject, records the decision in the
	// board's admin log (with Sub and Reason, which may be empty). Absent
	// (old events, applied before decisions were logged) records nothing,
	// so that a node replaying them agrees with one that loaded a snapshot
	// written before then.
	Logged bool `json:"lg,omitempty"`
	// Reach, on EvProfile, EvLink and EvErase, is the board reach of the token that
	// sent it: apply fails the event with ErrForbidden where the member
	// ranks on a board outside it (reach.go). Absent (old events, internal
	// callers) means every board, as before.
	Reach *Reach `json:"rc,omitempty"`
	// MaxBoards, on EvSettings, is the tenant's board limit when the event
	// was accepted: creating a board past it fails with ErrLimit. Absent
	// (old events, PutBoard) means no limit.
	MaxBoards int `json:"mb,omitempty"`
	// MaxProfiles, on EvProfile, is the tenant's limit of members with a
	// profile when the event was accepted; MaxAliases, on EvLink, its limit
	// of aliases per member; MaxHeld, on EvSubmit and EvGroup, its limit of
	// quarantined items per board. Past one, apply fails the event with
	// ErrLimit (a held item: reason quarantine_full). Absent (old events):
	// no limit but the built-in ones (quota.go).
	MaxProfiles int `json:"mp,omitempty"`
	MaxAliases  int `json:"ma,omitempty"`
	MaxHeld     int `json:"mh,omitempty"`
	// KeepIDs, on EvSubmit and EvGroup, is how long (ms) the boards it
	// writes keep idempotency ids: applying it first forgets older ones
	// (seen.go). Absent (old events, no retention) means for ever.
	KeepIDs int64 `json:"ki,omitempty"`

	// digests[g][i] stands for the idempotency id of item i of group g
	// (EvSubmit: group 0 is Items), zero where it has none: computed by
	// Prepare on the fetcher goroutine, ahead of apply. Never encoded.
	digests [][]idDigest
}

// Prepare computes ev's id digests ahead of Apply, off the replica
// goroutine (the hub's fetcher calls it). Cost: one SHA-256 per item with
// an id. Optional: Apply computes the digests itself where it did not run.
func (ev *Event) Prepare() {
	switch ev.Kind {
	case EvSubmit:
		ev.digests = [][]idDigest{digestItems(ev.Items)}
	case EvGroup:
		ev.digests = make([][]idDigest, len(ev.Groups))
		for i, g := range ev.Groups {
			ev.digests[i] = digestItems(g.Items)
		}
	}
}

// digestsOf returns the digests of group g of ev, nil where Prepare did not
// run (apply then computes them itself).
func (ev *Event) digestsOf(g int) []idDigest {
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

// Group is one Submit call's batch inside an EvGroup event: applied in
// order, each with its own board, results and error.
type Group struct {
	Board string `json:"b"`
	Items []Item `json:"i"`
}

// EncodeEvent returns ev's encoding, as the stream stores it.
func EncodeEvent(ev *Event) ([]byte, error) {
	return json.Marshal(ev)
}

// DecodeEvent decodes one stream message. An error means the event is
// consumed and ignored, identically on every node.
func DecodeEvent(data []byte) (*Event, error) {
	ev := new(Event)
	if err := json.Unmarshal(data, ev); err != nil {
		return nil, fmt.Errorf("hub: decode event: %w", err)
	}
	return ev, nil
}

// EncodeGroup encodes one group of an EvGroup event for EncodeGroupEvent.
// The hub's Submit calls encode their own group on their own goroutines,
// in parallel, so the committer's serial path (gather, encode, publish,
// fsync, ack) only joins bytes; the length is also the group's exact
// share of the event's size. O(items). The bytes are encoding/json's;
// appendGroup writes the common case without reflection.
func EncodeGroup(g Group) ([]byte, error) {
	if out, ok := appendGroup(make([]byte, 0, groupSize(g)), g); ok {
		return out, nil
	}
	return json.Marshal(g)
}

// EncodeGroupEvent encodes head (an EvGroup event whose Groups is empty)
// with groups, each encoded by EncodeGroup, in order: the event that
// EncodeEvent encodes for head with those Groups, its "g" key last
// (DecodeEvent reads both alike: the content, not the order of keys,
// defines the outcome). At least one group. O(bytes).
func EncodeGroupEvent(head *Event, groups [][]byte) ([]byte, error) {
	if len(head.Groups) != 0 || len(groups) == 0 {
		return nil, errors.New("ledger: a group event needs its groups encoded apart, at least one")
	}
	data, err := json.Marshal(head) // {"k":"group","t":...}: never empty, ends in '}'
	if err != nil {
		return nil, err
	}
	n := len(data) + len(`,"g":[]`)
	for _, g := range groups {
		n += len(g) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, data[:len(data)-1]...)
	out = append(out, `,"g":[`...)
	for i, g := range groups {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, g...)
	}
	return append(out, "]}"...), nil
}
