package board

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers test them with errors.Is; returned errors wrap
// them with the offending value.
var (
	ErrBadScore    = errors.New("board: score is not a finite number")
	ErrBadSubscore = errors.New("board: subscore is not a finite number")
	ErrBadConfig   = errors.New("board: invalid config")
	ErrNotFound    = errors.New("board: member not on the board")
	ErrSameMember  = errors.New("board: cannot merge a member into itself")
	ErrCorrupt     = errors.New("board: corrupt snapshot")
	ErrTooLarge    = errors.New("board: board is full")
	ErrBadMember   = errors.New("board: member handle out of range")
)

// MaxMember is the largest member handle a board accepts. The member index
// is a slice indexed by handle (4 bytes per handle up to the largest seen),
// so handles must be dense, as the identity index assigns them.
const MaxMember = 1<<28 - 1

// Order says which scores rank first.
type Order uint8

const (
	// Desc ranks higher values first (points). The zero value.
	Desc Order = iota
	// Asc ranks lower values first (golf, speedruns, penalty time).
	Asc
)

// ParseOrder turns "desc" or "asc" into an Order; "" means Desc.
func ParseOrder(s string) (Order, error) {
	switch s {
	case "", "desc":
		return Desc, nil
	case "asc":
		return Asc, nil
	}
	return 0, fmt.Errorf("%w: order %q is neither \"desc\" nor \"asc\"", ErrBadConfig, s)
}

func (o Order) String() string {
	if o == Asc {
		return "asc"
	}
	return "desc"
}

// Policy says what a submission does to an existing entry of its member.
type Policy uint8

const (
	// Best keeps the better (score, subscore) pair by the board's orders;
	// an equal pair keeps the old entry and its sequence. The zero value.
	Best Policy = iota
	// Latest overwrites the entry.
	Latest
	// Sum adds score and subscore to the entry's.
	Sum
	// First keeps the first entry and ignores later submissions.
	First
)

var policyNames = [...]string{Best: "best", Latest: "latest", Sum: "sum", First: "first"}

// ParsePolicy turns a policy name into a Policy; "" means Best.
func ParsePolicy(s string) (Policy, error) {
	if s == "" {
		return Best, nil
	}
	for p, name := range policyNames {
		if s == name {
			return Policy(p), nil
		}
	}
	return 0, fmt.Errorf("%w: policy %q is not one of best, latest, sum, first", ErrBadConfig, s)
}

func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("Policy(%d)", uint8(p))
}

// Tiebreak orders entries with equal score and subscore by when they reached it.
type Tiebreak uint8

const (
	// Earliest ranks the entry that reached the score first higher. The zero value.
	Earliest Tiebreak = iota
	// LatestFirst ranks the entry that reached the score last higher.
	LatestFirst
)

// ParseTiebreak turns "earliest" or "latest" into a Tiebreak; "" means Earliest.
func ParseTiebreak(s string) (Tiebreak, error) {
	switch s {
	case "", "earliest":
		return Earliest, nil
	case "latest":
		return LatestFirst, nil
	}
	return 0, fmt.Errorf("%w: tiebreak %q is neither \"earliest\" nor \"latest\"", ErrBadConfig, s)
}

func (t Tiebreak) String() string {
	if t == LatestFirst {
		return "latest"
	}
	return "earliest"
}

// Config holds a board's settings. The zero Config is a descending,
// best-score board with earliest-first ties.
type Config struct {
	Order         Order
	SubscoreOrder Order
	Policy        Policy
	Tiebreak      Tiebreak

	// CompareMembers orders two members whose score, subscore and sequence are
	// all equal, which only happens for submissions applied in one batch. It
	// must be a total order consistent across nodes: the identity index's
	// bytewise comparison of external ids. Nil means handle order.
	CompareMembers func(a, b uint32) int

	// Seed seeds the level source. Levels change speed, never ranks.
	// Zero means 1.
	Seed uint64
}

func (c Config) validate() error {
	if c.Order > Asc || c.SubscoreOrder > Asc {
		return fmt.Errorf("%w: unknown order", ErrBadConfig)
	}
	if c.Policy > First {
		return fmt.Errorf("%w: unknown policy %d", ErrBadConfig, c.Policy)
	}
	if c.Tiebreak > LatestFirst {
		return fmt.Errorf("%w: unknown tiebreak %d", ErrBadConfig, c.Tiebreak)
	}
	return nil
}

// Entry is a member's standing on a board.
type Entry struct {
	Member   uint32  // dense handle from the identity index
	Score    float64 // finite; -0 is stored as +0
	Subscore float64 // finite; -0 is stored as +0
	Seq      uint64  // sequence at which the entry reached this score
}

// Row is an entry with its 1-based rank.
type Row struct {
	Rank int
	Entry
}

// Submission is one score submitted for a member at a sequence. Sequences
// must not decrease from one submission to the next on a board.
type Submission struct {
	Member   uint32
	Score    float64
	Subscore float64
	Seq      uint64
}

// Change reports what a mutation did to one member. A rank of 0 means absent:
// OldRank 0 is an insert, NewRank 0 a removal. Subscribers use OldRank and
// NewRank to find which rank ranges shifted: every rank between the two
// (inclusive) changed occupant, and nothing else did.
type Change struct {
	Member  uint32
	OldRank int
	NewRank int
	Old     Entry // valid where OldRank > 0
	New     Entry // valid where NewRank > 0
	Applied bool  // the policy took the submission (false: the old entry was kept)
}

// Moved reports whether the change touched the ranked list at all.
func (c Change) Moved() bool {
	return c.OldRank != c.NewRank || c.Old != c.New
}
