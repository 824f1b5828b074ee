package subscriptions

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Kind is what a view shows.
type Kind uint8

const (
	// Top shows Limit rows from rank Offset+1 on.
	Top Kind = iota + 1
	// Around shows Radius rows above and below Member, its own included.
	Around
	// Rank shows the single row at Rank.
	Rank
	// Members shows the rows of Members that have one, in rank order.
	Members
)

// Kinds lists every kind, in the order metrics report them.
var Kinds = []Kind{Top, Around, Rank, Members}

var kindNames = [...]string{Top: "top", Around: "around", Rank: "rank", Members: "members"}

// String returns the protocol's name of k.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind returns the kind named s, or false.
func ParseKind(s string) (Kind, bool) {
	for k, name := range kindNames {
		if name != "" && name == s {
			return Kind(k), true
		}
	}
	return 0, false
}

// Spec describes one view of a board-window. The caller validates it
// (PROTOCOL.md's limits); the package assumes Limit ≥ 1, Radius ≥ 0, Rank ≥ 1
// and member ids without NUL bytes.
type Spec struct {
	Kind    Kind
	Offset  int      // Top
	Limit   int      // Top
	Member  string   // Around: an external id or alias
	Radius  int      // Around
	Rank    int      // Rank
	Members []string // Members: external ids or aliases
}

// ErrBadSpec reports a Spec whose Kind is not one of the four.
var ErrBadSpec = errors.New("subscriptions: unknown view kind")

// normalize sorts and deduplicates Members, so that two specs naming the
// same set share one view.
func (s Spec) normalize() Spec {
	if s.Kind == Members {
		s.Members = slices.Compact(slices.Sorted(slices.Values(s.Members)))
	}
	return s
}

// key identifies the distinct view s describes: equal specs of one
// board-window share one view. Fields a kind ignores are left out.
func (s Spec) key() string {
	switch s.Kind {
	case Top:
		return "t" + strconv.Itoa(s.Offset) + ":" + strconv.Itoa(s.Limit)
	case Around:
		return "a" + strconv.Itoa(s.Radius) + ":" + s.Member
	case Rank:
		return "r" + strconv.Itoa(s.Rank)
	default:
		return "m" + strings.Join(s.Members, "\x00")
	}
}
