package ledger

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/rankwire/rankwire/identity"
)

// Validation of what a client sends, done at ingest (the hub, before an
// event is published) so that the error names the field. Apply may assume
// what passed.

// MaxAliases is the most aliases one link takes.
const MaxAliases = 100

// ValidateItems checks a batch as a whole: its size and every item, the
// error naming the first bad index and field (scores[7].score).
func ValidateItems(items []Item) error {
	if len(items) == 0 || len(items) > MaxBatch {
		return errorf(ErrBadRequest, "scores: %d items, want 1..%d", len(items), MaxBatch)
	}
	for i, it := range items {
		if p := itemProblem(it); p != "" {
			return errorf(ErrBadRequest, "scores[%d].%s", i, p)
		}
	}
	return nil
}

// itemProblem says what is wrong with it, starting with the field's name,
// or "" where nothing is.
func itemProblem(it Item) string {
	switch {
	case identity.Reason(it.Member) != "":
		return "member: " + identity.Reason(it.Member)
	case math.IsNaN(it.Score) || math.IsInf(it.Score, 0):
		return "score: not a finite number"
	case math.IsNaN(it.Subscore) || math.IsInf(it.Subscore, 0):
		return "subscore: not a finite number"
	case len(it.ID) > MaxIDLen:
		return fmt.Sprintf("id: longer than %d bytes", MaxIDLen)
	case !utf8.ValidString(it.ID):
		return "id: invalid UTF-8" // two ids must not read as one key
	}
	return ""
}

// ValidateLink checks a link's member and aliases, naming the field.
func ValidateLink(member string, aliases []string) error {
	if p := identity.Reason(member); p != "" {
		return errorf(ErrBadRequest, "member: %s", p)
	}
	if len(aliases) == 0 || len(aliases) > MaxAliases {
		return errorf(ErrBadRequest, "aliases: %d, want 1..%d", len(aliases), MaxAliases)
	}
	for i, a := range aliases {
		if p := identity.Reason(a); p != "" {
			return errorf(ErrBadRequest, "aliases[%d]: %s", i, p)
		}
	}
	return nil
}
